// libFuzzer target: the tokenizers on any text. The first byte picks the vocabulary (SentencePiece,
// byte-level BPE with llama 3's or Qwen2's pre-tokenizer) and whether control tokens written in
// the text are parsed; the rest is the text. Besides crashes it checks what vocab.h promises:
// byte-level BPE gives any bytes back from their tokens, and encoding is deterministic.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "tilegraph/core/error.h"
#include "tilegraph/model/vocab.h"

namespace {

using tg::model::Vocab;

const Vocab& vocabulary(int which) {
  static const Vocab vocabularies[] = {Vocab::minimal_sentencepiece(512), Vocab::minimal_byte_level(512),
                                       Vocab::minimal_qwen2(512)};
  return vocabularies[which];
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const Vocab& vocab = vocabulary(data[0] % 3);
  const bool parse_special = (data[0] / 3) % 2 != 0;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    const std::vector<int32_t> ids = vocab.encode(text, parse_special);
    if (vocab.encode(text, parse_special) != ids) std::abort();
    const std::string decoded = vocab.decode(ids);
    if (vocab.kind() == Vocab::Kind::kBytePairGpt2 && !parse_special && decoded != text) std::abort();
  } catch (const tg::Error&) {
    // a clean refusal (a byte no token covers)
  }
  return 0;
}
