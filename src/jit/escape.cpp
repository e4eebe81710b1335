#include "escape.h"

#include "tilegraph/core/utf8.h"

namespace tg::jit {

namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

}  // namespace

std::string escape_bytes(std::string_view bytes) {
  constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(bytes.size());
  for (size_t i = 0; i < bytes.size();) {
    const size_t n = bytes[i] == '%' ? 0 : decode_utf8(bytes, i).length;
    if (n == 0) {
      const auto b = static_cast<unsigned char>(bytes[i]);
      out += '%';
      out += kHex[b >> 4];
      out += kHex[b & 0xF];
      i += 1;
    } else {
      out.append(bytes.substr(i, n));
      i += n;
    }
  }
  return out;
}

std::string unescape_bytes(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const int hi = text[i] == '%' && i + 2 < text.size() ? hex_value(text[i + 1]) : -1;
    const int lo = hi >= 0 ? hex_value(text[i + 2]) : -1;
    if (lo >= 0) {
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

}  // namespace tg::jit
