#pragma once
// Shared by the JIT tests: a private temporary directory per test (never the user's real cache),
// the kernel templates under tests/unit/jit/kernels, and a runner for the saxpy test kernel.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "tilegraph/jit/compiler.h"
#include "tilegraph/jit/process.h"

namespace tg::jit::testing {

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Sets (or, for nullptr, unsets) an environment variable for its lifetime.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value);
  ~ScopedEnv();
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> saved_;
};

// tests/unit/jit/kernels/<name>
std::string kernel_template(const std::string& name);

// A configuration whose cache lives in `dir`/cache.
Config test_config(const std::filesystem::path& dir, uint64_t max_cache_bytes = uint64_t(1) << 30);

// Calls a saxpy kernel (kernels/saxpy.cpp) on n elements in `blocks` blocks and returns true if
// y = scale * x + y everywhere.
bool saxpy_works(EntryFn entry, float scale, int64_t n = 1000, uint32_t blocks = 4);

// Ids of the entries in the cache, in no particular order.
std::vector<std::string> cached_ids(const DiskCache& cache);

// Number of files in a subdirectory of the cache ("tmp", "deps", ...).
size_t files_in(const DiskCache& cache, const std::string& subdir);

void write_text(const std::filesystem::path& path, const std::string& text);
std::string read_text(const std::filesystem::path& path);

// Runs the tg_jit_child helper with `args`.
ProcessResult run_child(const std::vector<std::string>& args);

}  // namespace tg::jit::testing
