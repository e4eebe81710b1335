#pragma once
// SHA-256 through OpenSSL: kernel ids, dependency hashes and the content hash of every cached
// kernel.
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

struct SHA256state_st;

namespace tg::jit {

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void update(const void* data, size_t size);
  void update(std::string_view data) { update(data.data(), data.size()); }
  // 64 lowercase hex digits; the object cannot be updated afterwards.
  std::string hex_digest();

 private:
  std::unique_ptr<SHA256state_st> ctx_;
  bool finished_ = false;
};

std::string sha256_hex(std::string_view data);
// Hashes the whole file behind `fd` from offset 0 (the fd's position is not used); throws
// tg::Error on a read error.
std::string sha256_fd(int fd, const std::string& what);
// Throws tg::Error if the file cannot be read or is not a regular file (a FIFO would block, a
// device such as /dev/zero never end).
std::string sha256_file(const std::string& path);

}  // namespace tg::jit
