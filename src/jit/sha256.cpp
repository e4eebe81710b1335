// OpenSSL 3 deprecates the SHA256_* functions in favour of EVP, but the first EVP call in a
// process initialises OpenSSL's provider machinery: 1-2 ms here, most of the budget of a disk hit
// in a fresh process. These are the same SHA-256 implementation without that start-up cost.
#define OPENSSL_SUPPRESS_DEPRECATED
#include "tilegraph/jit/sha256.h"

#include <fcntl.h>
#include <openssl/sha.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "tilegraph/core/error.h"

namespace tg::jit {

Sha256::Sha256() : ctx_(std::make_unique<SHA256state_st>()) {
  if (SHA256_Init(ctx_.get()) != 1) throw Error("jit: OpenSSL could not initialise SHA-256");
}

Sha256::~Sha256() = default;

void Sha256::update(const void* data, size_t size) {
  if (finished_) throw Error("jit: Sha256::update after hex_digest");
  if (SHA256_Update(ctx_.get(), data, size) != 1) throw Error("jit: OpenSSL SHA-256 update failed");
}

std::string Sha256::hex_digest() {
  if (finished_) throw Error("jit: Sha256::hex_digest called twice");
  finished_ = true;
  unsigned char digest[SHA256_DIGEST_LENGTH];
  if (SHA256_Final(digest, ctx_.get()) != 1) throw Error("jit: OpenSSL SHA-256 final failed");
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * SHA256_DIGEST_LENGTH);
  for (unsigned char byte : digest) {
    hex += kHex[byte >> 4];
    hex += kHex[byte & 15];
  }
  return hex;
}

std::string sha256_hex(std::string_view data) {
  Sha256 sha;
  sha.update(data);
  return sha.hex_digest();
}

std::string sha256_fd(int fd, const std::string& what) {
  Sha256 sha;
  char buffer[64 * 1024];
  off_t offset = 0;
  for (;;) {
    const ssize_t n = ::pread(fd, buffer, sizeof buffer, offset);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error("jit: cannot read " + what + ": " + std::strerror(errno));
    if (n == 0) break;
    sha.update(buffer, size_t(n));
    offset += n;
  }
  return sha.hex_digest();
}

std::string sha256_file(const std::string& path) {
  // O_NONBLOCK so that opening a FIFO does not wait for a writer; it is refused below with the
  // devices, which would never end. The flag does not change reads of a regular file.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw Error("jit: cannot open " + path + ": " + std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw Error("jit: cannot hash " + path + ": not a regular file");
  }
  try {
    std::string digest = sha256_fd(fd, path);
    ::close(fd);
    return digest;
  } catch (...) {
    ::close(fd);
    throw;
  }
}

}  // namespace tg::jit
