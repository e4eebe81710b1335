#include "tilegraph/jit/sha256.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "tilegraph/core/error.h"

namespace tg::jit {

namespace {

// Fetched once: an implicit fetch inside every EVP_DigestInit_ex costs about a microsecond.
const EVP_MD* sha256_md() {
  static EVP_MD* const md = EVP_MD_fetch(nullptr, "SHA2-256", nullptr);
  if (!md) throw Error("jit: OpenSSL has no SHA-256 implementation available");
  return md;
}

}  // namespace

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  if (!ctx_ || EVP_DigestInit_ex(ctx_, sha256_md(), nullptr) != 1) {
    EVP_MD_CTX_free(ctx_);
    throw Error("jit: OpenSSL could not initialise SHA-256");
  }
}

Sha256::~Sha256() { EVP_MD_CTX_free(ctx_); }

void Sha256::update(const void* data, size_t size) {
  if (EVP_DigestUpdate(ctx_, data, size) != 1) throw Error("jit: OpenSSL SHA-256 update failed");
}

std::string Sha256::hex_digest() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_DigestFinal_ex(ctx_, digest, &length) != 1) {
    throw Error("jit: OpenSSL SHA-256 final failed");
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * length);
  for (unsigned int i = 0; i < length; ++i) {
    hex += kHex[digest[i] >> 4];
    hex += kHex[digest[i] & 15];
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
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error("jit: cannot open " + path + ": " + std::strerror(errno));
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
