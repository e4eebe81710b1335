#pragma once
// The compiler that builds one kernel type, with what the kernel key needs to know about it.
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "tilegraph/jit/config.h"
#include "tilegraph/jit/kernel.h"
#include "tilegraph/jit/macros.h"
#include "tilegraph/jit/process.h"

namespace tg::jit {

struct Toolchain {
  std::string compiler;  // absolute path of the driver, as configured (not resolved)
  std::string version;   // its --version output
  std::string arch;      // the host's machine name, or the CUDA architecture
  std::vector<std::string> base_flags;
  // The compiler's whole environment: $PATH and LC_ALL=C. Nothing else, so variables such as
  // CPATH or GCC_EXEC_PREFIX, which the key does not see, cannot change what gets built.
  std::vector<std::string> environment;
  // How long one run of the compiler may take (Config::compile_timeout).
  std::chrono::seconds time_limit{0};
  // The CPU time and address space limits of each compiler process (Config::compile_cpu_time,
  // Config::compile_max_bytes; zero: none).
  std::chrono::seconds cpu_time{0};
  uint64_t max_bytes = 0;

  // Every flag for one kernel: the base flags, then -I<dir> per include directory, then
  // -D<name>=<value> per macro. The macros must have been validated.
  std::vector<std::string> flags(const MacroMap& macros, const std::vector<std::string>& include_dirs) const;
  // How to run the compiler: its environment with TMPDIR=`tmp_dir`, and the limits above.
  ProcessOptions process_options(const std::filesystem::path& tmp_dir) const;
};

// Finds the compiler for `type` (Config::cxx or Config::nvcc) and its version. Asking for the
// version means running the compiler, so the answer is remembered in `records_dir` under the
// compiler's path and trusted while the compiler file's stat stamp is unchanged. Throws
// tg::Error if the compiler cannot be found or run.
Toolchain find_toolchain(KernelType type, const Config& config, const std::filesystem::path& records_dir,
                         const std::filesystem::path& tmp_dir);

}  // namespace tg::jit
