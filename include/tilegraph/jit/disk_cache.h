#pragma once
// The on-disk kernel cache, safe to share between processes (docs/jit.md, "Cache layout"):
//   kernels/<id>.so    the compiled kernel        kernels/<id>.json  its manifest
//   kernels/<id>.lock  exists while a process builds or removes <id>
//   deps/              dependency records (which headers a template includes)
//   toolchains/        compiler version records   tmp/  builds in progress
//   sources/           generated templates (Compiler::load_source), named by content hash
//   CACHEDIR.TAG       the marker that makes the directory the cache's
// A kernel is built in tmp/ and published by rename, so no one sees half a file; its content
// hash is checked against the manifest before every load, so a truncated or altered file is
// rebuilt rather than run. A process that has a kernel loaded holds a shared flock on the .so,
// which is how eviction knows not to remove it.
//
// The cache removes files, so it only works in a directory it can tell is its own: one with its
// CACHEDIR.TAG, or one it creates or finds empty (and then marks). Even there it touches only
// the names it writes (docs/jit.md lists them); anything else is left alone and not counted.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tilegraph/jit/kernel.h"
#include "tilegraph/jit/manifest.h"

namespace tg::jit {

// A dlopen'ed kernel. It keeps its .so open with a shared flock for as long as it lives, so the
// entry counts as in use; destruction dlcloses it.
class LoadedKernel {
 public:
  LoadedKernel(void* handle, int fd, EntryFn entry) : handle_(handle), fd_(fd), entry_(entry) {}
  ~LoadedKernel();
  LoadedKernel(const LoadedKernel&) = delete;
  LoadedKernel& operator=(const LoadedKernel&) = delete;

  EntryFn entry() const { return entry_; }

 private:
  void* handle_;
  int fd_;
  EntryFn entry_;
};

struct CacheLoad {
  std::unique_ptr<LoadedKernel> kernel;
  KernelSource source = KernelSource::kDisk;  // kDisk or kCompiled
  // Set when a bad entry (truncated, altered, half-written) was found and rebuilt.
  std::string replaced_entry_problem;
  double build_seconds = 0;
};

struct CacheEntryInfo {
  std::string id;
  std::optional<Manifest> manifest;  // none for a half-written or damaged entry
  uint64_t bytes = 0;                // .so plus manifest
  bool in_use = false;               // some process has it loaded
};

struct CacheStats {
  std::filesystem::path dir;
  size_t entries = 0;     // complete entries
  size_t incomplete = 0;  // a .so without a readable manifest or the other way round
  size_t in_use = 0;
  uint64_t bytes = 0;  // of all entries; what the byte budget bounds
  uint64_t max_bytes = 0;
  size_t dependency_records = 0;
  size_t toolchain_records = 0;
  size_t temporaries = 0;      // builds in progress or left by a crash
  double compile_seconds = 0;  // summed over the entries: the time the cache saves per reuse
};

struct CacheRemoval {
  size_t removed = 0;
  uint64_t bytes = 0;
  size_t kept_in_use = 0;  // entries that would have gone but are loaded, or being built
  // Temporaries left in place: builds whose lock is held, and files younger than an hour (a
  // write in progress cannot be told apart from one a crash left).
  size_t kept_temporaries = 0;
};

class DiskCache {
 public:
  // Opens the cache to use it, creating the directory and its subdirectories if missing
  // (prepare_cache_dir: private to this user). An existing directory must be the cache: marked
  // with its CACHEDIR.TAG, or else empty or holding only names the cache writes (a cache of an
  // earlier version, which wrote no marker), and is then marked. Anything else throws tg::Error
  // naming the directory and an entry that is not the cache's, before anything is written.
  // Then what dead processes left is removed: lock files no one holds, and build directories
  // whose kernel's lock no one holds (a live builder holds it while its directory exists).
  explicit DiskCache(std::filesystem::path dir);
  // Opens the cache to list, count or clear it, creating and marking nothing: a directory that
  // does not exist is an empty cache. Refuses what the constructor refuses.
  static DiskCache open_existing(std::filesystem::path dir);

  const std::filesystem::path& dir() const { return dir_; }
  std::filesystem::path kernel_path(const std::string& id) const;
  std::filesystem::path manifest_path(const std::string& id) const;
  std::filesystem::path deps_dir() const { return dir_ / "deps"; }
  std::filesystem::path toolchains_dir() const { return dir_ / "toolchains"; }
  std::filesystem::path tmp_dir() const { return dir_ / "tmp"; }
  std::filesystem::path sources_dir() const { return dir_ / "sources"; }

  // Writes the kernel to `output`, a path inside `work_dir` (a fresh private directory), or
  // throws.
  using BuildFn = std::function<void(const std::filesystem::path& work_dir, const std::filesystem::path& output)>;

  // Loads the verified entry `id`; if there is none (or it is bad), builds it with `build` and
  // publishes it with a manifest holding `key`. Across processes at most one builds a given id
  // at a time; the others wait and load its result. If `build` throws, the exception passes
  // through and the cache keeps nothing of it.
  CacheLoad load_or_build(const std::string& id, const nlohmann::json& key, const BuildFn& build);

  // Most recently used first.
  std::vector<CacheEntryInfo> list() const;
  CacheStats stats(uint64_t max_bytes) const;
  // Removes abandoned temporaries, then least-recently-used entries that no process has loaded
  // until the entries take at most `max_bytes`, then dependency records of removed kernels.
  CacheRemoval evict(uint64_t max_bytes);
  // Removes every entry not in use, every record, every generated source (they are written
  // again on demand, with the same name) and every abandoned temporary.
  CacheRemoval clear();

 private:
  DiskCache(std::filesystem::path dir, bool create);
  struct Attempt;
  Attempt try_load(const std::string& id) const;
  void record_use(const std::string& id, const Manifest& loaded) const;
  bool remove_entry(const std::string& id) const;
  void remove_entry_files(const std::string& id) const;
  // Returns how many temporaries it kept (CacheRemoval::kept_temporaries).
  size_t remove_abandoned_temporaries() const;
  void remove_leftovers() const;
  std::vector<std::filesystem::directory_entry> temporaries() const;
  bool missing() const;
  void remove_orphan_records() const;
  uint64_t entry_bytes() const;
  std::filesystem::path lock_path(const std::string& id) const;

  std::filesystem::path dir_;
};

}  // namespace tg::jit
