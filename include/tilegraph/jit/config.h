#pragma once
// Settings of the JIT compiler. Every field can be set in code; Config::from_env() supplies the
// defaults from the environment (docs/jit.md lists the variables).
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>

namespace tg::jit {

struct Config {
  // $TG_JIT_CACHE_DIR, else $HOME/.cache/tilegraph/jit.
  std::filesystem::path cache_dir;
  // $TG_JIT_CACHE_MAX_BYTES, else 1 GiB. Least-recently-used entries not loaded by any process
  // are evicted past it.
  uint64_t max_cache_bytes = uint64_t(1) << 30;
  // $TG_JIT_CXX, else the C++ compiler tilegraph was built with. A name without '/' is looked
  // up in $PATH.
  std::string cxx;
  // $TG_JIT_NVCC, else nvcc on $PATH, else /usr/local/cuda/bin/nvcc.
  std::string nvcc;
  // $TG_JIT_CUDA_ARCH: the GPU architecture cuda kernels are compiled for.
  std::string cuda_arch = "sm_75";
  // $TG_JIT_COMPILE_TIMEOUT (seconds), else 600: one run of the compiler (a compile, the
  // dependency scan, the version probe) past it is killed and the request fails.
  std::chrono::seconds compile_timeout{600};
  // $TG_JIT_COMPILE_CPU_SECONDS, else the compile timeout: the CPU time each compiler process
  // (the driver, cc1plus, the assembler, the linker) may use, enforced by the kernel, so that it
  // holds even for a compiler whose caller is gone.
  std::chrono::seconds compile_cpu_time{0};
  // $TG_JIT_COMPILE_MAX_BYTES, else 8 GiB: the address space of each compiler process, room for
  // any kernel compile and a bound for a runaway one; past it allocations fail, and the compile.
  uint64_t compile_max_bytes = uint64_t(8) << 30;

  // Malformed values throw tg::Error naming the variable.
  static Config from_env();
};

}  // namespace tg::jit
