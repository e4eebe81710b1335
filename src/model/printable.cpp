#include "printable.h"

#include <cstdio>

namespace tg::model {

std::string printable(std::string_view text, char quote) {
  constexpr size_t kMaxShown = 80;
  std::string out(1, quote);
  for (size_t i = 0; i < text.size() && i < kMaxShown; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f && c != static_cast<unsigned char>(quote) && c != '\\') {
      out += char(c);
    } else {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", c);
      out += escaped;
    }
  }
  if (text.size() > kMaxShown) out += "...";
  return out + quote;
}

}  // namespace tg::model
