#pragma once
// Opening a file a user named as input (a model, a prompt, a text): only a regular file is read.
// A directory cannot be, a FIFO would block until a writer comes, and a device such as /dev/zero
// or /dev/urandom never ends; each is refused before a byte is read, with a message naming it.
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace tg {

// "a regular file", "a directory", "a FIFO", "a character device", ...: the type of a stat mode.
const char* file_type_name(mode_t mode);

// An open regular file, closed when this goes out of scope.
class InputFile {
 public:
  // Opens `path` for reading. Errors throw tg::Error starting with `who` ("gguf", "--prompt-file"):
  // "<who>: cannot open '<path>': <reason>", or "<who>: '<path>' is not a regular file (it is a
  // FIFO)". The open does not wait for a FIFO's writer.
  static InputFile open(const std::string& path, std::string_view who);

  InputFile(InputFile&& other) noexcept;
  InputFile& operator=(InputFile&&) = delete;
  InputFile(const InputFile&) = delete;
  ~InputFile();

  int fd() const { return fd_; }
  uint64_t size() const { return size_; }  // when opened
  const std::string& path() const { return path_; }

 private:
  InputFile(int fd, uint64_t size, std::string path) : fd_(fd), size_(size), path_(std::move(path)) {}
  int fd_;
  uint64_t size_;
  std::string path_;
};

// The bytes `fd` gives until its end, read in bounded steps: more than `max_bytes` throws
// tg::Error "<who>: <name> is larger than the limit of <max_bytes> bytes (<MiB>)" as soon as the
// limit is passed, so a stream that never ends (standard input from /dev/zero) costs at most
// `max_bytes` of memory.
std::string read_at_most(int fd, uint64_t max_bytes, std::string_view who, std::string_view name);

// The whole regular file at `path` (InputFile::open's checks), refused before it is read when it
// is larger than `max_bytes`, with read_at_most's message (the name is '<path>').
std::string read_input_file(const std::string& path, uint64_t max_bytes, std::string_view who);

}  // namespace tg
