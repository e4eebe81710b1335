#pragma once
// JSON strings are UTF-8, but paths (and a compiler's --version output) are arbitrary bytes. Every
// such string the cache puts into JSON — the kernel key, dependency and toolchain records — is
// escaped: '%' and each byte that is not part of valid UTF-8 become "%XX" (two uppercase hex
// digits). Ordinary paths come out unchanged, the text is always valid UTF-8, and two different
// byte strings never escape to the same text, which the kernel id depends on.
#include <string>
#include <string_view>

namespace tg::jit {

std::string escape_bytes(std::string_view bytes);
// The inverse of escape_bytes. A '%' not followed by two hex digits (text escape_bytes did not
// write) is kept as it is.
std::string unescape_bytes(std::string_view text);

}  // namespace tg::jit
