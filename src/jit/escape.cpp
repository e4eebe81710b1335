#include "escape.h"

namespace tg::jit {

namespace {

// Length of the valid UTF-8 sequence starting at s[i] (RFC 3629: no overlong forms, no
// surrogates, nothing above U+10FFFF), or 0 if none starts there.
size_t utf8_length(std::string_view s, size_t i) {
  // Past the end reads as 0, which is no continuation byte.
  const auto byte = [&](size_t k) { return i + k < s.size() ? unsigned(static_cast<unsigned char>(s[i + k])) : 0u; };
  const auto continuation = [&](size_t k, unsigned lo = 0x80, unsigned hi = 0xBF) {
    return byte(k) >= lo && byte(k) <= hi;
  };
  const unsigned b0 = byte(0);
  if (b0 < 0x80) return 1;
  if (b0 >= 0xC2 && b0 <= 0xDF) return continuation(1) ? 2 : 0;
  if (b0 >= 0xE0 && b0 <= 0xEF) {
    const unsigned lo = b0 == 0xE0 ? 0xA0 : 0x80;
    const unsigned hi = b0 == 0xED ? 0x9F : 0xBF;
    return continuation(1, lo, hi) && continuation(2) ? 3 : 0;
  }
  if (b0 >= 0xF0 && b0 <= 0xF4) {
    const unsigned lo = b0 == 0xF0 ? 0x90 : 0x80;
    const unsigned hi = b0 == 0xF4 ? 0x8F : 0xBF;
    return continuation(1, lo, hi) && continuation(2) && continuation(3) ? 4 : 0;
  }
  return 0;
}

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
    const size_t n = bytes[i] == '%' ? 0 : utf8_length(bytes, i);
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
