#pragma once
// The JIT compiler (after torch_catlass's JitCompiler): template + macros + kernel type →
// kernel id → in-memory map → disk cache → compile → dlopen → the template's `run`.
//
//   using namespace tg::jit;
//   EntryFn run = Compiler::instance().get_kernel("kernels/saxpy.cpp", {{"SCALE", "2"}},
//                                                 KernelType::kCpu);
//   run(block_num, nullptr, &params);
//
// Within a process a request (template path as given, macros, kernel type, include dirs)
// resolves once; later calls are a hash lookup. Kernels stay loaded until the Compiler is
// destroyed (for instance() at exit). All member functions are thread-safe.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tilegraph/jit/config.h"
#include "tilegraph/jit/disk_cache.h"
#include "tilegraph/jit/kernel.h"
#include "tilegraph/jit/macros.h"

namespace tg::jit {

struct CompilerStats {
  uint64_t memory_hits = 0;
  uint64_t disk_hits = 0;
  uint64_t compiles = 0;
  uint64_t rebuilt_bad_entries = 0;  // truncated, altered or half-written entries replaced
  uint64_t evictions = 0;
  double compile_seconds = 0;
};

class Compiler {
 public:
  // The process-wide compiler, configured by Config::from_env() on first use.
  static Compiler& instance();

  // Prepares config.cache_dir (throws tg::Error if it is not private to this user).
  explicit Compiler(Config config);
  ~Compiler();
  Compiler(const Compiler&) = delete;
  Compiler& operator=(const Compiler&) = delete;

  // The kernel's entry point, compiling the template if no cache has it. Throws tg::Error for
  // invalid macros (before running anything), a missing template, or a failed compile (the
  // message carries the compiler's diagnostics). `include_dirs` are added as -I after
  // tilegraph's own include directory.
  EntryFn get_kernel(std::string_view template_path, const MacroMap& macros, KernelType kernel_type,
                     const std::vector<std::string>& include_dirs = {});
  // get_kernel, also saying which id the kernel has and where it came from.
  Kernel load(std::string_view template_path, const MacroMap& macros, KernelType kernel_type,
              const std::vector<std::string>& include_dirs = {});
  // load() for a template generated in memory (the EVG front end's kernels): the source is
  // written to <cache>/sources/<sha256 of source>.cpp (.cu for cuda) unless it is already there,
  // and that file is the template, so equal sources share one kernel across processes.
  Kernel load_source(std::string_view source, const MacroMap& macros, KernelType kernel_type,
                     const std::vector<std::string>& include_dirs = {});
  // The id the request resolves to now, without loading or compiling anything.
  std::string kernel_id(std::string_view template_path, const MacroMap& macros, KernelType kernel_type,
                        const std::vector<std::string>& include_dirs = {});

  CompilerStats stats() const;
  const Config& config() const;
  DiskCache& cache();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tg::jit
