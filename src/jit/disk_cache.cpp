#include "tilegraph/jit/disk_cache.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>

#include "cache_names.h"
#include "file_lock.h"
#include "file_util.h"
#include "tilegraph/core/error.h"
#include "tilegraph/core/input_file.h"
#include "tilegraph/jit/cache_dir.h"
#include "tilegraph/jit/sha256.h"

namespace tg::jit {

namespace {

using cache_names::is_hex_id;

// A temporary file older than this was left by a crashed process (live writes take
// milliseconds); temporary build directories are judged by their build lock instead.
constexpr auto kAbandonedFileAge = std::chrono::hours(1);

void check_id(const std::string& id) {
  if (!is_hex_id(id)) throw Error("jit: '" + id + "' is not a kernel id (64 hex digits)");
}

uint64_t size_of_file(const std::filesystem::path& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 ? uint64_t(st.st_size) : 0;
}

struct ManifestRead {
  std::optional<Manifest> manifest;
  bool exists = false;
  std::string problem;  // why there is no manifest
};

ManifestRead read_manifest(const std::filesystem::path& path) {
  ManifestRead read;
  const std::optional<std::string> text = read_file(path);
  if (!text) {
    read.problem = "no manifest";
    return read;
  }
  read.exists = true;
  try {
    read.manifest = Manifest::from_json(nlohmann::json::parse(*text));
  } catch (const nlohmann::json::exception& e) {
    read.problem = std::string("manifest is not valid JSON (") + e.what() + ")";
  } catch (const Error& e) {
    read.problem = e.what();
  }
  return read;
}

// Holds the shared "in use" flock while it owns the descriptor.
struct OpenKernel {
  int fd = -1;
  ~OpenKernel() {
    if (fd >= 0) ::close(fd);
  }
  int release() { return std::exchange(fd, -1); }
};

// A private build directory under tmp/, removed with everything in it on scope exit.
class WorkDir {
 public:
  WorkDir(const std::filesystem::path& tmp_dir, const std::string& id) {
    std::string pattern = (tmp_dir / (id + std::string(cache_names::kBuildSuffix))).string();
    if (!::mkdtemp(pattern.data())) {
      throw Error("jit: cannot create a build directory in " + tmp_dir.string() + ": " + std::strerror(errno));
    }
    path_ = pattern;
  }
  ~WorkDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  WorkDir(const WorkDir&) = delete;
  WorkDir& operator=(const WorkDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// True if some process holds the shared flock of a loaded kernel on this file.
bool file_in_use(const std::filesystem::path& so) {
  const int fd = ::open(so.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool busy = ::flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  ::close(fd);
  return busy;
}

// A missing directory has no entries: a cache opened with open_existing may not exist, and one
// an earlier version wrote may lack a subdirectory.
std::vector<std::filesystem::directory_entry> entries_of(const std::filesystem::path& dir) {
  std::vector<std::filesystem::directory_entry> out;
  std::error_code error;
  for (auto it = std::filesystem::directory_iterator(dir, error); !error && it != std::filesystem::directory_iterator();
       it.increment(error)) {
    out.push_back(*it);
  }
  if (error && error != std::errc::no_such_file_or_directory) {
    throw Error("jit: cannot list " + dir.string() + ": " + error.message());
  }
  return out;
}

// Types without following symlinks: the cache writes none, so a symlink is never its own.
bool is_file(const std::filesystem::directory_entry& entry) {
  std::error_code error;
  return entry.symlink_status(error).type() == std::filesystem::file_type::regular;
}

bool is_directory(const std::filesystem::directory_entry& entry) {
  std::error_code error;
  return entry.symlink_status(error).type() == std::filesystem::file_type::directory;
}

std::string name_of(const std::filesystem::path& path) { return path.filename().string(); }

// The regular files in `dir` whose names pass `ours`.
std::vector<std::filesystem::path> own_files(const std::filesystem::path& dir, bool (*ours)(std::string_view)) {
  std::vector<std::filesystem::path> out;
  for (const auto& entry : entries_of(dir)) {
    if (is_file(entry) && ours(name_of(entry.path()))) out.push_back(entry.path());
  }
  return out;
}

// Whether `dir` holds the cache, and if so whether it is marked. Throws if it is something else:
// a file, or a directory with names the cache does not write and no marker.
enum class Found { kNothing, kMarked, kUnmarked };

Found inspect(const std::filesystem::path& dir) {
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0) {
    if (errno == ENOENT) return Found::kNothing;
    throw Error("jit: cache directory " + dir.string() + ": " + std::strerror(errno));
  }
  if (!S_ISDIR(st.st_mode)) throw Error("jit: cache directory " + dir.string() + " is not a directory");
  if (cache_names::is_our_tag(dir / cache_names::kTag)) return Found::kMarked;
  if (const std::string foreign = cache_names::first_foreign_entry(dir); !foreign.empty()) {
    throw Error("jit: refusing cache directory " + dir.string() + ": it holds " + foreign +
                ", which the JIT cache did not write, and no tilegraph " + std::string(cache_names::kTag) +
                ", so it is not a JIT cache (and the cache deletes files in its directory); set "
                "TG_JIT_CACHE_DIR to an empty or new directory");
  }
  return Found::kUnmarked;
}

[[noreturn]] void refuse_kernel_file(const std::filesystem::path& so, const std::string& why) {
  throw Error("jit: refusing kernel file " + so.string() + ": " + why +
              ", which the cache never writes: another user may have put code there for this process to load; "
              "remove it (tilegraph jit clear) and check who can write to the cache");
}

// The cache's own kernels are regular files of this user that no one else can write (the
// directory checks of cache_dir.h make the same demands of the directories).
void check_kernel_file(const std::filesystem::path& so, const struct stat& st) {
  if (!S_ISREG(st.st_mode)) refuse_kernel_file(so, std::string("it is ") + file_type_name(st.st_mode));
  if (st.st_uid != ::geteuid()) {
    refuse_kernel_file(so, "it is owned by uid " + std::to_string(st.st_uid) + ", not by the cache's owner (uid " +
                               std::to_string(::geteuid()) + ")");
  }
  if (st.st_mode & (S_IWGRP | S_IWOTH)) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", unsigned(st.st_mode & 07777));
    refuse_kernel_file(so, std::string("its mode ") + mode + " lets other users write it");
  }
}

// "" when `address` is a function symbol of a loaded library, else what it is ("a data object").
std::string symbol_type(void* address) {
  Dl_info info;
  void* entry = nullptr;
  if (::dladdr1(address, &info, &entry, RTLD_DL_SYMENT) == 0 || !entry) return "not in the symbol table";
  const auto* symbol = static_cast<const ElfW(Sym)*>(entry);
  const unsigned type = ELF64_ST_TYPE(symbol->st_info);  // the same bits as ELF32_ST_TYPE
  switch (type) {
    case STT_FUNC:
    case STT_GNU_IFUNC: return "";
    case STT_OBJECT: return "a data object";
    case STT_TLS: return "a thread-local variable";
    default: return "a symbol of ELF type " + std::to_string(type);
  }
}

}  // namespace

LoadedKernel::~LoadedKernel() {
  ::dlclose(handle_);
  ::close(fd_);
}

struct DiskCache::Attempt {
  std::unique_ptr<LoadedKernel> kernel;
  std::optional<Manifest> manifest;
  bool present = false;  // some file of the entry exists
  std::string problem;   // why there is no kernel
};

DiskCache::DiskCache(std::filesystem::path dir) : DiskCache(std::move(dir), true) {}

DiskCache DiskCache::open_existing(std::filesystem::path dir) { return DiskCache(std::move(dir), false); }

DiskCache::DiskCache(std::filesystem::path dir, bool create) : dir_(std::filesystem::absolute(dir)) {
  // Whose directory it is comes first: nothing may be written to a directory that is not the
  // cache's, and the privacy checks' advice (chmod 700) would be wrong for it.
  const Found found = inspect(dir_);
  if (!create) {
    if (found != Found::kNothing) check_cache_dir(dir_);
    return;
  }
  prepare_cache_dir(dir_);
  for (const std::string_view sub : cache_names::kSubdirs) prepare_cache_dir(dir_ / sub);
  if (found != Found::kMarked) {
    write_file_atomically(tmp_dir(), dir_ / cache_names::kTag, cache_names::tag_content());
  }
  remove_leftovers();
}

void DiskCache::remove_leftovers() const {
  // One cleaner at a time, and never while an evictor is at work.
  const std::optional<FileLock> guard = FileLock::try_acquire(dir_ / cache_names::kEvictLock);
  if (!guard) return;
  remove_abandoned_temporaries();
  for (const std::filesystem::path& lock : own_files(dir_ / "kernels", cache_names::is_lock)) {
    // Held: a build or a removal in progress. Free: acquiring and releasing it removes the file.
    FileLock::try_acquire(lock);
  }
}

bool DiskCache::missing() const { return ::access(dir_.c_str(), F_OK) != 0 && errno == ENOENT; }

std::filesystem::path DiskCache::kernel_path(const std::string& id) const { return dir_ / "kernels" / (id + ".so"); }

std::filesystem::path DiskCache::manifest_path(const std::string& id) const {
  return dir_ / "kernels" / (id + ".json");
}

std::filesystem::path DiskCache::lock_path(const std::string& id) const { return dir_ / "kernels" / (id + ".lock"); }

DiskCache::Attempt DiskCache::try_load(const std::string& id) const {
  Attempt attempt;
  const std::filesystem::path so = kernel_path(id);
  ManifestRead read = read_manifest(manifest_path(id));
  attempt.manifest = std::move(read.manifest);
  attempt.problem = std::move(read.problem);
  // O_NOFOLLOW: the cache writes no symlinks, so one at the path is someone else's, pointing at
  // code this process must not load (refused below, as is a file that is not ours alone).
  OpenKernel file{::open(so.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW)};
  if (file.fd < 0 && errno == ELOOP) refuse_kernel_file(so, "it is a symbolic link");
  attempt.present = read.exists || file.fd >= 0;
  if (!attempt.manifest) return attempt;
  if (attempt.manifest->id != id) {
    attempt.problem = "manifest is for kernel " + attempt.manifest->id;
    return attempt;
  }
  if (file.fd < 0) {
    attempt.problem = "manifest without a kernel file";
    return attempt;
  }
  // Take the shared lock before looking at the content: from here on no eviction can remove
  // the file, and one that ran just before us shows up as a file no longer at the path.
  while (::flock(file.fd, LOCK_SH) != 0) {
    if (errno != EINTR) throw Error("jit: cannot lock " + so.string() + ": " + std::strerror(errno));
  }
  struct stat held;
  struct stat at_path;
  if (::fstat(file.fd, &held) != 0 || ::lstat(so.c_str(), &at_path) != 0 || held.st_ino != at_path.st_ino ||
      held.st_dev != at_path.st_dev) {
    attempt.problem = "kernel file replaced or removed while loading";
    return attempt;
  }
  check_kernel_file(so, held);
  const Manifest& m = *attempt.manifest;
  if (uint64_t(held.st_size) != m.size) {
    attempt.problem = "kernel file has " + std::to_string(held.st_size) + " bytes, manifest says " +
                      std::to_string(m.size) + " (truncated or overwritten)";
    return attempt;
  }
  if (sha256_fd(file.fd, so.string()) != m.sha256) {
    attempt.problem = "kernel file's SHA-256 does not match its manifest (altered or corrupted)";
    return attempt;
  }
  // Load exactly the file that was verified, whatever happens to the path meanwhile.
  const std::string fd_path = "/proc/self/fd/" + std::to_string(file.fd);
  void* handle = ::dlopen(fd_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = ::dlerror();
    attempt.problem = std::string("dlopen failed: ") + (why ? why : "unknown error");
    return attempt;
  }
  void* run = ::dlsym(handle, "run");
  if (!run) {
    ::dlclose(handle);
    attempt.problem = "the kernel defines no extern \"C\" run(uint32_t, void*, const void*)";
    return attempt;
  }
  // A variable named run (`extern "C" int run = 5;`) is found just the same: calling it would
  // jump into data. The symbol table says which it is.
  if (const std::string type = symbol_type(run); !type.empty()) {
    ::dlclose(handle);
    attempt.problem = "the kernel's symbol run is " + type + ", not a function run(uint32_t, void*, const void*)";
    return attempt;
  }
  attempt.kernel = std::make_unique<LoadedKernel>(handle, file.release(), reinterpret_cast<EntryFn>(run));
  return attempt;
}

void DiskCache::record_use(const std::string& id, const Manifest& loaded) const {
  std::optional<Manifest> current = read_manifest(manifest_path(id)).manifest;
  // A rebuild may have published a new manifest since we read ours; never write back one that
  // describes a file no longer there.
  if (!current || current->sha256 != loaded.sha256) return;
  current->last_used_ms = unix_time_ms();
  try {
    write_file_atomically(tmp_dir(), manifest_path(id), current->to_json().dump(2) + "\n");
  } catch (const Error&) {
    // The kernel is loaded and verified; a full disk only costs the eviction order its hint.
  }
}

CacheLoad DiskCache::load_or_build(const std::string& id, const nlohmann::json& key, const BuildFn& build) {
  check_id(id);
  CacheLoad result;
  if (Attempt hit = try_load(id); hit.kernel) {
    // The last-use time is a hint: skip it rather than wait while someone else holds the lock.
    if (std::optional<FileLock> lock = FileLock::try_acquire(lock_path(id))) {
      record_use(id, *hit.manifest);
    }
    result.kernel = std::move(hit.kernel);
    return result;
  }

  const FileLock lock = FileLock::acquire(lock_path(id));
  // Whoever held the lock before us may have just published this very kernel.
  Attempt again = try_load(id);
  if (again.kernel) {
    record_use(id, *again.manifest);
    result.kernel = std::move(again.kernel);
    return result;
  }
  if (again.present) {
    // Holding the lock, the problem is real, not a publish in progress. Remove the bad entry
    // first, so that if the build fails too the cache keeps nothing.
    result.replaced_entry_problem = again.problem;
    remove_entry_files(id);
  }

  const WorkDir work(tmp_dir(), id);
  const std::filesystem::path output = work.path() / "kernel.so";
  const auto start = std::chrono::steady_clock::now();
  build(work.path(), output);
  result.build_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  Manifest manifest;
  manifest.id = id;
  manifest.key = key;
  manifest.sha256 = sha256_file(output.string());
  manifest.size = size_of_file(output);
  manifest.created_ms = manifest.last_used_ms = unix_time_ms();
  manifest.compile_seconds = result.build_seconds;
  // The linker honours the umask, which may leave the file group-writable (umask 002): loads
  // refuse such a file, so it is made this user's alone first.
  if (::chmod(output.c_str(), 0700) != 0) {
    throw Error("jit: cannot set the mode of " + output.string() + ": " + std::strerror(errno));
  }
  // The kernel file first: a reader that sees it before the manifest finds a mismatch, waits
  // for our lock and looks again.
  if (::rename(output.c_str(), kernel_path(id).c_str()) != 0) {
    throw Error("jit: cannot publish " + kernel_path(id).string() + ": " + std::strerror(errno));
  }
  write_file_atomically(tmp_dir(), manifest_path(id), manifest.to_json().dump(2) + "\n");

  Attempt built = try_load(id);
  if (!built.kernel) {
    remove_entry_files(id);
    throw Error("jit: kernel " + id + " was built but cannot be loaded: " + built.problem);
  }
  result.kernel = std::move(built.kernel);
  result.source = KernelSource::kCompiled;
  return result;
}

void DiskCache::remove_entry_files(const std::string& id) const {
  remove_file(kernel_path(id));
  remove_file(manifest_path(id));
}

bool DiskCache::remove_entry(const std::string& id) const {
  const std::optional<FileLock> lock = FileLock::try_acquire(lock_path(id));
  if (!lock) return false;  // being built or removed right now
  OpenKernel file{::open(kernel_path(id).c_str(), O_RDONLY | O_CLOEXEC)};
  // Holding the exclusive flock while unlinking makes a loader that opened the file just before
  // wait, then see that the file is gone.
  if (file.fd >= 0 && ::flock(file.fd, LOCK_EX | LOCK_NB) != 0) return false;
  remove_entry_files(id);
  return true;
}

std::vector<CacheEntryInfo> DiskCache::list() const {
  std::set<std::string> ids;
  for (const std::filesystem::path& p : own_files(dir_ / "kernels", cache_names::is_entry_file)) {
    ids.insert(p.stem().string());
  }
  std::vector<CacheEntryInfo> out;
  for (const std::string& id : ids) {
    CacheEntryInfo info;
    info.id = id;
    info.manifest = read_manifest(manifest_path(id)).manifest;
    info.bytes = size_of_file(kernel_path(id)) + size_of_file(manifest_path(id));
    info.in_use = file_in_use(kernel_path(id));
    if (info.manifest && ::access(kernel_path(id).c_str(), F_OK) != 0) info.manifest.reset();
    out.push_back(std::move(info));
  }
  std::sort(out.begin(), out.end(), [](const CacheEntryInfo& a, const CacheEntryInfo& b) {
    const int64_t ta = a.manifest ? a.manifest->last_used_ms : 0;
    const int64_t tb = b.manifest ? b.manifest->last_used_ms : 0;
    return ta != tb ? ta > tb : a.id < b.id;
  });
  return out;
}

CacheStats DiskCache::stats(uint64_t max_bytes) const {
  CacheStats stats;
  stats.dir = dir_;
  stats.max_bytes = max_bytes;
  for (const CacheEntryInfo& entry : list()) {
    (entry.manifest ? stats.entries : stats.incomplete) += 1;
    stats.in_use += entry.in_use ? 1 : 0;
    stats.bytes += entry.bytes;
    if (entry.manifest) stats.compile_seconds += entry.manifest->compile_seconds;
  }
  stats.dependency_records = own_files(deps_dir(), cache_names::is_record).size();
  stats.toolchain_records = own_files(toolchains_dir(), cache_names::is_record).size();
  stats.temporaries = temporaries().size();
  return stats;
}

CacheRemoval DiskCache::evict(uint64_t max_bytes) {
  CacheRemoval removal;
  if (missing()) return removal;
  // One evictor at a time; a process that finds another at work leaves it to finish.
  const std::optional<FileLock> guard = FileLock::try_acquire(dir_ / cache_names::kEvictLock);
  if (!guard) return removal;
  removal.kept_temporaries = remove_abandoned_temporaries();
  // Runs after every compile: sizes from the directory alone are enough to see that nothing
  // needs to go; manifests are read only when something does.
  if (entry_bytes() <= max_bytes) return removal;
  std::vector<CacheEntryInfo> entries = list();
  uint64_t total = 0;
  for (const CacheEntryInfo& entry : entries) total += entry.bytes;
  // Least recently used first; half-written entries (no manifest) before everything.
  for (auto it = entries.rbegin(); it != entries.rend() && total > max_bytes; ++it) {
    if (remove_entry(it->id)) {
      total -= it->bytes;
      removal.removed += 1;
      removal.bytes += it->bytes;
    } else {
      removal.kept_in_use += 1;
    }
  }
  if (removal.removed > 0) remove_orphan_records();
  return removal;
}

CacheRemoval DiskCache::clear() {
  CacheRemoval removal;
  if (missing()) return removal;
  const FileLock guard = FileLock::acquire(dir_ / cache_names::kEvictLock);
  for (const CacheEntryInfo& entry : list()) {
    if (remove_entry(entry.id)) {
      removal.removed += 1;
      removal.bytes += entry.bytes;
    } else {
      removal.kept_in_use += 1;
    }
  }
  for (const std::filesystem::path& p : own_files(deps_dir(), cache_names::is_record)) remove_file(p);
  for (const std::filesystem::path& p : own_files(toolchains_dir(), cache_names::is_record)) remove_file(p);
  for (const std::filesystem::path& p : own_files(sources_dir(), cache_names::is_source)) remove_file(p);
  removal.kept_temporaries = remove_abandoned_temporaries();
  return removal;
}

uint64_t DiskCache::entry_bytes() const {
  uint64_t total = 0;
  for (const std::filesystem::path& p : own_files(dir_ / "kernels", cache_names::is_entry_file)) {
    total += size_of_file(p);
  }
  return total;
}

void DiskCache::remove_orphan_records() const {
  for (const std::filesystem::path& record : own_files(deps_dir(), cache_names::is_record)) {
    // Dependency records name the kernel they last resolved to (src/jit/dependencies.cpp).
    std::string kernel;
    try {
      kernel = nlohmann::json::parse(read_file(record).value_or("{}")).value("kernel_id", "");
    } catch (const nlohmann::json::exception&) {
      // unreadable: as good as orphaned
    }
    if (!is_hex_id(kernel) || ::access(manifest_path(kernel).c_str(), F_OK) != 0) {
      remove_file(record);
    }
  }
}

std::vector<std::filesystem::directory_entry> DiskCache::temporaries() const {
  std::vector<std::filesystem::directory_entry> out;
  for (const auto& entry : entries_of(tmp_dir())) {
    const std::string name = name_of(entry.path());
    if ((is_directory(entry) && cache_names::is_build_dir(name)) ||
        (is_file(entry) && cache_names::is_temp_file(name))) {
      out.push_back(entry);
    }
  }
  return out;
}

size_t DiskCache::remove_abandoned_temporaries() const {
  size_t kept = 0;
  const auto now = std::filesystem::file_time_type::clock::now();
  for (const auto& entry : temporaries()) {
    const std::filesystem::path& p = entry.path();
    std::error_code error;
    if (is_directory(entry)) {
      // <id>.build.XXXXXX: abandoned if no one holds the build lock of <id>.
      if (std::optional<FileLock> lock = FileLock::try_acquire(lock_path(name_of(p).substr(0, 64)))) {
        std::filesystem::remove_all(p, error);
      } else {
        kept += 1;
      }
    } else if (now - entry.last_write_time(error) > kAbandonedFileAge && !error) {
      remove_file(p);
    } else {
      kept += 1;
    }
  }
  return kept;
}

}  // namespace tg::jit
