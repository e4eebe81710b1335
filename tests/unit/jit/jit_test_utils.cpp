#include "jit_test_utils.h"

#include <stdlib.h>

#include <cstdlib>

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "jit/kernels/saxpy_params.h"

namespace tg::jit::testing {

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "tg-jit-test-XXXXXX").string();
  if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::permissions(path_, std::filesystem::perms::owner_all, ignored);
  std::filesystem::remove_all(path_, ignored);
}

ScopedEnv::ScopedEnv(const char* name, const char* value) : name_(name) {
  if (const char* old = std::getenv(name)) saved_ = old;
  if (value) {
    ::setenv(name, value, 1);
  } else {
    ::unsetenv(name);
  }
}

ScopedEnv::~ScopedEnv() {
  if (saved_) {
    ::setenv(name_.c_str(), saved_->c_str(), 1);
  } else {
    ::unsetenv(name_.c_str());
  }
}

std::string kernel_template(const std::string& name) {
  return std::string(TG_TEST_SOURCE_DIR) + "/unit/jit/kernels/" + name;
}

Config test_config(const std::filesystem::path& dir, uint64_t max_cache_bytes) {
  Config config = Config::from_env();
  config.cache_dir = dir / "cache";
  config.max_cache_bytes = max_cache_bytes;
  return config;
}

bool saxpy_works(EntryFn entry, float scale, int64_t n, uint32_t blocks) {
  std::vector<float> x(static_cast<size_t>(n)), y(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    x[size_t(i)] = float(i % 17) - 8.0f;
    y[size_t(i)] = float(i % 5);
  }
  const SaxpyParams params{n, x.data(), y.data()};
  entry(blocks, nullptr, &params);
  for (int64_t i = 0; i < n; ++i) {
    if (y[size_t(i)] != scale * x[size_t(i)] + float(i % 5)) return false;
  }
  return true;
}

std::vector<std::string> cached_ids(const DiskCache& cache) {
  std::vector<std::string> ids;
  for (const CacheEntryInfo& entry : cache.list()) ids.push_back(entry.id);
  return ids;
}

size_t files_in(const DiskCache& cache, const std::string& subdir) {
  size_t count = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(cache.dir() / subdir)) {
    ++count;
  }
  return count;
}

void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

ProcessResult run_child(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {TG_JIT_CHILD};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_process(argv);
}

}  // namespace tg::jit::testing
