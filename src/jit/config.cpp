#include "tilegraph/jit/config.h"

#include <pwd.h>
#include <unistd.h>

#include <limits>
#include <vector>

#include "tilegraph/core/env.h"
#include "tilegraph/core/error.h"

namespace tg::jit {

namespace {

std::filesystem::path home_dir() {
  if (const auto home = config::env("HOME"); home && !home->empty()) return *home;
  // No $HOME (a service, a sanitised environment): ask the user database.
  std::vector<char> buffer(16 * 1024);
  passwd entry;
  passwd* found = nullptr;
  if (::getpwuid_r(::geteuid(), &entry, buffer.data(), buffer.size(), &found) == 0 && found && found->pw_dir &&
      found->pw_dir[0]) {
    return found->pw_dir;
  }
  throw Error(
      "jit: neither $HOME nor the user database gives a home directory; set "
      "TG_JIT_CACHE_DIR");
}

}  // namespace

Config Config::from_env() {
  Config config;
  const auto dir = config::env("TG_JIT_CACHE_DIR");
  config.cache_dir = dir && !dir->empty() ? std::filesystem::path(*dir) : home_dir() / ".cache" / "tilegraph" / "jit";
  config.max_cache_bytes = uint64_t(
      config::env_int("TG_JIT_CACHE_MAX_BYTES", long(config.max_cache_bytes), 1, std::numeric_limits<long>::max()));
  const auto cxx = config::env("TG_JIT_CXX");
  config.cxx = cxx && !cxx->empty() ? *cxx : TG_JIT_DEFAULT_CXX;
  const auto nvcc = config::env("TG_JIT_NVCC");
  config.nvcc = nvcc && !nvcc->empty() ? *nvcc : "nvcc";
  if (const auto arch = config::env("TG_JIT_CUDA_ARCH"); arch && !arch->empty()) {
    config.cuda_arch = *arch;
  }
  config.compile_timeout = std::chrono::seconds(config::env_int(
      "TG_JIT_COMPILE_TIMEOUT", long(config.compile_timeout.count()), 1, std::numeric_limits<int>::max()));
  config.compile_cpu_time = std::chrono::seconds(config::env_int(
      "TG_JIT_COMPILE_CPU_SECONDS", long(config.compile_timeout.count()), 1, std::numeric_limits<int>::max()));
  // At least 64 MiB: below that not even the compiler driver starts.
  config.compile_max_bytes = uint64_t(config::env_int("TG_JIT_COMPILE_MAX_BYTES", long(config.compile_max_bytes),
                                                      long(64) << 20, std::numeric_limits<long>::max()));
  return config;
}

}  // namespace tg::jit
