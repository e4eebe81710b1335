#pragma once
// File primitives the JIT cache is built from: stat stamps that detect a changed file without
// reading it, and writes that readers see either complete or not at all.
#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace tg::jit {

// What stat(2) says about a file. Any write changes ctime, which no one but root can set back,
// so an unchanged stamp means unchanged content — except for writes within the timestamp
// granularity of the previous look, which is_settled() guards against.
struct FileStamp {
  uint64_t device = 0;
  uint64_t inode = 0;
  int64_t size = 0;
  int64_t mtime_ns = 0;
  int64_t ctime_ns = 0;

  bool operator==(const FileStamp&) const = default;
  // True once the file has not changed for long enough that a later write within the same
  // timestamp tick is impossible: only such a stamp may stand in for the content.
  bool is_settled(int64_t now_ns) const;
};

// Follows symlinks, like the compiler does when it opens the file; nullopt if it does not exist.
std::optional<FileStamp> stamp_of(const std::filesystem::path& path);

int64_t unix_time_ns();
int64_t unix_time_ms();

// The whole file, or nullopt if it does not exist; other errors throw tg::Error.
std::optional<std::string> read_file(const std::filesystem::path& path);

// Writes `content` to a new file in `tmp_dir` (mode 0600, named <target's name>.tmp.XXXXXX) and
// renames it onto `target`, so a reader sees the old file or the new one, never a mix. `tmp_dir`
// must be on target's file system.
void write_file_atomically(const std::filesystem::path& tmp_dir, const std::filesystem::path& target,
                           const std::string& content);

// The same, but only if `target` does not exist: returns false, leaving it as it is, if it does
// (another process published it first).
bool write_file_if_absent(const std::filesystem::path& tmp_dir, const std::filesystem::path& target,
                          const std::string& content);

// unlink(2), ignoring a file that is already gone; other errors throw tg::Error.
void remove_file(const std::filesystem::path& path);

}  // namespace tg::jit
