#include "tilegraph/core/utf8.h"

namespace tg {

Utf8Char decode_utf8(std::string_view s, size_t i) {
  // Past the end reads as 0, which is no continuation byte.
  const auto byte = [&](size_t k) { return i + k < s.size() ? unsigned(static_cast<unsigned char>(s[i + k])) : 0u; };
  const auto continuation = [&](size_t k, unsigned lo = 0x80, unsigned hi = 0xBF) {
    return byte(k) >= lo && byte(k) <= hi;
  };
  const auto payload = [&](size_t k) { return uint32_t(byte(k) & 0x3F); };
  const unsigned b0 = byte(0);
  if (b0 < 0x80) return {1, b0};
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    if (continuation(1)) return {2, (b0 & 0x1F) << 6 | payload(1)};
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    // The second byte's range excludes overlong forms (E0) and surrogates (ED).
    const unsigned lo = b0 == 0xE0 ? 0xA0 : 0x80;
    const unsigned hi = b0 == 0xED ? 0x9F : 0xBF;
    if (continuation(1, lo, hi) && continuation(2)) return {3, (b0 & 0x0F) << 12 | payload(1) << 6 | payload(2)};
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    // Overlong forms (F0) and code points above U+10FFFF (F4).
    const unsigned lo = b0 == 0xF0 ? 0x90 : 0x80;
    const unsigned hi = b0 == 0xF4 ? 0x8F : 0xBF;
    if (continuation(1, lo, hi) && continuation(2) && continuation(3)) {
      return {4, (b0 & 0x07) << 18 | payload(1) << 12 | payload(2) << 6 | payload(3)};
    }
  }
  return {0, 0};
}

}  // namespace tg
