#pragma once
// The text of tokens as they are generated, for printing while decoding goes on. Vocab::decode
// is a concatenation of each token's bytes, but a token may end inside a UTF-8 character (byte
// tokens, byte-level BPE), so what a token adds is handed out only up to the last complete
// character; the rest waits for the next token or finish().
#include <cstdint>
#include <string>
#include <string_view>

#include "tilegraph/model/vocab.h"

namespace tg::model {

class TextStream {
 public:
  // The vocabulary must outlive the stream.
  explicit TextStream(const Vocab& vocab) : vocab_(vocab) {}

  // The bytes `token` adds to the text that can be shown now.
  std::string push(int32_t token);
  // The bytes held back at the end (an incomplete character, which a terminal then shows as
  // U+FFFD through terminal_text).
  std::string finish();

 private:
  const Vocab& vocab_;
  std::string held_;  // decoded bytes not handed out yet
};

// The length of the longest prefix of `text` that does not end inside a UTF-8 character that
// more bytes could still complete (invalid bytes count as complete: they will never be valid).
size_t complete_utf8_prefix(std::string_view text);

}  // namespace tg::model
