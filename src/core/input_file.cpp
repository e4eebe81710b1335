#include "tilegraph/core/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

#include "tilegraph/core/error.h"

namespace tg {

const char* file_type_name(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "of an unknown type";
}

InputFile InputFile::open(const std::string& path, std::string_view who) {
  const std::string prefix(who);
  // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below like any non-file.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw Error(prefix + ": cannot open '" + path + "': " + std::strerror(errno));
  InputFile file(fd, 0, path);
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw Error(prefix + ": cannot stat '" + path + "': " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) {
    throw Error(prefix + ": '" + path + "' is not a regular file (it is " + file_type_name(st.st_mode) + ")");
  }
  // Reads block again from here on: a regular file never makes them wait, and a read that
  // returned EAGAIN would look like an error.
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  file.size_ = uint64_t(st.st_size);
  return file;
}

InputFile::InputFile(InputFile&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), size_(other.size_), path_(std::move(other.path_)) {}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

namespace {

[[noreturn]] void fail_too_large(uint64_t max_bytes, std::string_view who, std::string_view name) {
  char mib[32];
  std::snprintf(mib, sizeof mib, "%.0f MiB", double(max_bytes) / (1 << 20));
  throw Error(std::string(who) + ": " + std::string(name) + " is larger than the limit of " +
              std::to_string(max_bytes) + " bytes (" + mib + ")");
}

}  // namespace

std::string read_at_most(int fd, uint64_t max_bytes, std::string_view who, std::string_view name) {
  std::string bytes;
  char buffer[1 << 16];
  for (;;) {
    // One byte past the limit is enough to know it is passed.
    const uint64_t room = max_bytes - std::min<uint64_t>(bytes.size(), max_bytes) + 1;
    const ssize_t n = ::read(fd, buffer, size_t(std::min<uint64_t>(sizeof buffer, room)));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      throw Error(std::string(who) + ": cannot read " + std::string(name) + ": " + std::strerror(errno));
    }
    if (n == 0) return bytes;
    if (bytes.size() + size_t(n) > max_bytes) fail_too_large(max_bytes, who, name);
    bytes.append(buffer, size_t(n));
  }
}

std::string read_input_file(const std::string& path, uint64_t max_bytes, std::string_view who) {
  const InputFile file = InputFile::open(path, who);
  const std::string name = "'" + path + "'";
  if (file.size() > max_bytes) fail_too_large(max_bytes, who, name);
  // The limit holds while reading too: the file may grow meanwhile.
  return read_at_most(file.fd(), max_bytes, who, name);
}

}  // namespace tg
