#include "tilegraph/model/text_stream.h"

#include <span>
#include <utility>

namespace tg::model {

size_t complete_utf8_prefix(std::string_view text) {
  // Only the last lead byte can start an unfinished character: at most 3 bytes from the end.
  const size_t n = text.size();
  for (size_t back = 1; back <= 3 && back <= n; ++back) {
    const auto byte = uint8_t(text[n - back]);
    if ((byte & 0xc0) == 0x80) continue;  // a continuation byte: look further back
    const size_t length = (byte & 0xe0) == 0xc0 ? 2 : (byte & 0xf0) == 0xe0 ? 3 : (byte & 0xf8) == 0xf0 ? 4 : 1;
    return length > back ? n - back : n;
  }
  return n;
}

std::string TextStream::push(int32_t token) {
  held_ += vocab_.decode(std::span<const int32_t>(&token, 1));
  const size_t ready = complete_utf8_prefix(held_);
  std::string out = held_.substr(0, ready);
  held_.erase(0, ready);
  return out;
}

std::string TextStream::finish() { return std::exchange(held_, {}); }

}  // namespace tg::model
