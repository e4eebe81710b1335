#pragma once
// Cross-process mutual exclusion with flock(2) on a lock file that exists only while someone
// holds it, so finished work leaves no lock files behind. The holder unlinks the file before
// unlocking; a waiter that then gets the lock finds its file no longer at the path and retries
// on the new one, so at any moment only the holder of the file at the path owns the lock.
// flock locks belong to the open file, not the process: two threads of one process exclude
// each other too, and the lock dies with the holder.
#include <filesystem>
#include <optional>

namespace tg::jit {

class FileLock {
 public:
  // Blocks until the lock is held.
  static FileLock acquire(const std::filesystem::path& path);
  // nullopt if someone else holds it.
  static std::optional<FileLock> try_acquire(const std::filesystem::path& path);

  FileLock(FileLock&& other) noexcept;
  FileLock& operator=(FileLock&&) = delete;
  FileLock(const FileLock&) = delete;
  ~FileLock();

 private:
  FileLock(std::filesystem::path path, int fd) : path_(std::move(path)), fd_(fd) {}
  static std::optional<FileLock> lock(const std::filesystem::path& path, bool wait);

  std::filesystem::path path_;
  int fd_;
};

}  // namespace tg::jit
