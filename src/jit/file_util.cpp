#include "file_util.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "cache_names.h"
#include "tilegraph/core/error.h"

namespace tg::jit {

namespace {

// Linux file timestamps come from a clock that advances in ticks of up to a few milliseconds;
// two seconds is far beyond any tick and any skew between the clocks involved.
constexpr int64_t kSettleNs = 2'000'000'000;

int64_t to_ns(const timespec& t) { return int64_t(t.tv_sec) * 1'000'000'000 + t.tv_nsec; }

[[noreturn]] void fail(const std::string& what, const std::filesystem::path& path) {
  throw Error("jit: " + what + " " + path.string() + ": " + std::strerror(errno));
}

}  // namespace

bool FileStamp::is_settled(int64_t now_ns) const { return now_ns - std::max(mtime_ns, ctime_ns) > kSettleNs; }

std::optional<FileStamp> stamp_of(const std::filesystem::path& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) return std::nullopt;
    fail("cannot stat", path);
  }
  return FileStamp{uint64_t(st.st_dev), uint64_t(st.st_ino), int64_t(st.st_size), to_ns(st.st_mtim), to_ns(st.st_ctim)};
}

int64_t unix_time_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int64_t unix_time_ms() { return unix_time_ns() / 1'000'000; }

std::optional<std::string> read_file(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return std::nullopt;
    fail("cannot open", path);
  }
  std::string content;
  char buffer[16 * 1024];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int saved = errno;
      ::close(fd);
      errno = saved;
      fail("cannot read", path);
    }
    if (n == 0) break;
    content.append(buffer, size_t(n));
  }
  ::close(fd);
  return content;
}

namespace {

// `content` in a new file in `tmp_dir` named after `target`; returns its path.
std::string write_temporary(const std::filesystem::path& tmp_dir, const std::filesystem::path& target,
                            const std::string& content) {
  std::string tmp = (tmp_dir / (target.filename().string() + std::string(cache_names::kTempSuffix))).string();
  const int fd = ::mkostemp(tmp.data(), O_CLOEXEC);
  if (fd < 0) fail("cannot create a temporary file in", tmp_dir);
  size_t written = 0;
  while (written < content.size()) {
    const ssize_t n = ::write(fd, content.data() + written, content.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int saved = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      errno = saved;
      fail("cannot write", tmp);
    }
    written += size_t(n);
  }
  ::close(fd);
  return tmp;
}

}  // namespace

void write_file_atomically(const std::filesystem::path& tmp_dir, const std::filesystem::path& target,
                           const std::string& content) {
  const std::string tmp = write_temporary(tmp_dir, target, content);
  // Exchange, then unlink the old file: renaming over an existing file makes ext4 write the new
  // file's data out first (auto_da_alloc), ~1.5 ms, and manifests are rewritten on every load
  // from disk. Without that flush a crash can leave a damaged manifest, which the cache treats
  // as a bad entry and rebuilds.
  if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, target.c_str(), RENAME_EXCHANGE) == 0) {
    ::unlink(tmp.c_str());
    return;
  }
  if (::rename(tmp.c_str(), target.c_str()) != 0) {  // no target yet, or no exchange support
    const int saved = errno;
    ::unlink(tmp.c_str());
    errno = saved;
    fail("cannot rename a temporary file onto", target);
  }
}

bool write_file_if_absent(const std::filesystem::path& tmp_dir, const std::filesystem::path& target,
                          const std::string& content) {
  const std::string tmp = write_temporary(tmp_dir, target, content);
  int result = ::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, target.c_str(), RENAME_NOREPLACE);
  if (result != 0 && (errno == EINVAL || errno == ENOSYS)) {  // a file system without it: link
    result = ::link(tmp.c_str(), target.c_str());             // fails with EEXIST the same way
    if (result == 0) ::unlink(tmp.c_str());
  }
  if (result == 0) return true;
  const int saved = errno;
  ::unlink(tmp.c_str());
  if (saved == EEXIST) return false;
  errno = saved;
  fail("cannot publish a temporary file as", target);
}

void remove_file(const std::filesystem::path& path) {
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) fail("cannot remove", path);
}

}  // namespace tg::jit
