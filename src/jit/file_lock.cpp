#include "file_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "tilegraph/core/error.h"

namespace tg::jit {

std::optional<FileLock> FileLock::lock(const std::filesystem::path& path, bool wait) {
  for (;;) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) {
      throw Error("jit: cannot open lock file " + path.string() + ": " + std::strerror(errno));
    }
    if (::flock(fd, LOCK_EX | (wait ? 0 : LOCK_NB)) != 0) {
      const int error = errno;
      ::close(fd);
      if (error == EINTR) continue;
      if (error == EWOULDBLOCK) return std::nullopt;
      throw Error("jit: cannot lock " + path.string() + ": " + std::strerror(error));
    }
    struct stat held;
    struct stat at_path;
    if (::fstat(fd, &held) == 0 && ::stat(path.c_str(), &at_path) == 0 && held.st_dev == at_path.st_dev &&
        held.st_ino == at_path.st_ino) {
      return FileLock(path, fd);
    }
    ::close(fd);  // the previous holder removed this file on release: lock the current one
  }
}

FileLock FileLock::acquire(const std::filesystem::path& path) { return *lock(path, true); }

std::optional<FileLock> FileLock::try_acquire(const std::filesystem::path& path) { return lock(path, false); }

FileLock::FileLock(FileLock&& other) noexcept : path_(std::move(other.path_)), fd_(other.fd_) { other.fd_ = -1; }

FileLock::~FileLock() {
  if (fd_ < 0) return;
  ::unlink(path_.c_str());
  ::close(fd_);
}

}  // namespace tg::jit
