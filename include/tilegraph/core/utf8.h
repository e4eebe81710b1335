#pragma once
// UTF-8 decoding for text that comes from outside (model vocabularies, file paths): which bytes
// form a valid character, so that the rest can be escaped or replaced.
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace tg {

struct Utf8Char {
  size_t length;        // 1..4; 0 when the bytes at the position are not a valid character
  uint32_t code_point;  // meaningful when length > 0
};

// The character starting at s[i] (i < s.size()), valid by RFC 3629: no overlong forms, no
// surrogates, nothing above U+10FFFF, not cut short by the end of `s`.
Utf8Char decode_utf8(std::string_view s, size_t i);

}  // namespace tg
