// Byte-level BPE vocabularies (`tokenizer.ggml.model = "gpt2"`: llama 3, Qwen2): words cut by the
// pre-tokenizer, spelled in GPT-2's byte alphabet and merged by rank.
#include <cstdio>
#include <memory>

#include "bpe_bytes.h"
#include "bpe_merges.h"
#include "pretokenizer.h"
#include "printable.h"
#include "tilegraph/core/error.h"
#include "tilegraph/core/utf8.h"
#include "tilegraph/model/vocab.h"
#include "vocab_pieces.h"

namespace tg::model {

Vocab Vocab::minimal_byte_level(int64_t n_vocab) {
  static constexpr std::string_view kSpecials[] = {"<|begin_of_text|>", "<|end_of_text|>"};
  return minimal_bpe(n_vocab, "llama-bpe", kSpecials, 0, 1);
}

Vocab Vocab::minimal_qwen2(int64_t n_vocab) {
  static constexpr std::string_view kSpecials[] = {"<|endoftext|>", "<|im_start|>", "<|im_end|>"};
  return minimal_bpe(n_vocab, "qwen2", kSpecials, 0, 2);
}

Vocab Vocab::minimal_bpe(int64_t n_vocab, std::string_view pre, std::span<const std::string_view> specials, int bos,
                         int eos) {
  if (n_vocab < kMinimalByteLevelSize) {
    throw Error("llama: the byte-level vocabulary needs at least " + std::to_string(kMinimalByteLevelSize) +
                " tokens, n_vocab is " + std::to_string(n_vocab));
  }
  // Enough rules that encoding merges in several rounds and by rank, not just byte by byte.
  static constexpr std::string_view kRules[] = {"\xc4\xa0 t", "h e", "i n", "\xc4\xa0t he", "e r", "\xc4\xa0 a", "o n",
                                                "\xc4\xa0 s", "r e", "a t", "\xc4\xa0 w",   "o r"};
  Vocab v;
  v.kind_ = Kind::kBytePairGpt2;
  std::vector<std::string> pieces;
  std::vector<std::string> rules;
  const auto add = [&](std::string piece, TokenType type) {
    pieces.push_back(std::move(piece));
    v.types_.push_back(type);
  };
  for (int byte = 0; byte < 256; ++byte) add(gpt2_byte_level(std::string(1, char(byte))), TokenType::kNormal);
  for (std::string_view rule : kRules) {
    rules.emplace_back(rule);
    const size_t space = rule.find(' ');
    add(std::string(rule.substr(0, space)) + std::string(rule.substr(space + 1)), TokenType::kNormal);
  }
  const std::string space = gpt2_byte_level(" ");
  while (int64_t(pieces.size() + specials.size()) < n_vocab)
    add(space + "t" + std::to_string(pieces.size()), TokenType::kNormal);
  const int32_t first_special = int32_t(pieces.size());
  for (std::string_view special : specials) add(std::string(special), TokenType::kControl);
  v.bos_ = first_special + bos;
  v.eos_ = first_special + eos;
  v.scores_.assign(pieces.size(), 0.0f);
  v.set_pieces(std::move(pieces));
  v.pretokenizer_name_ = std::string(pre);
  const PretokenizerKind* kind = pretokenizer_kind(v.pretokenizer_name_);
  v.pretokenizer_ = std::make_shared<const Pretokenizer>(kind->pattern);
  v.whole_words_first_ = kind->whole_words_first;
  v.add_bos_ = kind->adds_bos;
  v.merges_ = std::make_shared<const BpeMerges>(
      std::move(rules), [&v](std::string_view piece) { return v.find(piece) >= 0; }, "minimal byte-level merges");
  v.index_special_tokens();
  return v;
}

void Vocab::encode_byte_level(std::string_view text, std::vector<int32_t>& ids) const {
  for (const std::string_view word : pretokenizer_->split(text)) {
    const std::string characters = gpt2_byte_level(word);
    if (whole_words_first_) {
      if (const int32_t id = find(characters); id >= 0) {
        ids.push_back(id);
        continue;
      }
    }
    for (const std::string_view piece : merges_->apply(characters)) {
      if (const int32_t id = find(piece); id >= 0) {
        ids.push_back(id);
        continue;
      }
      // Merges make only pieces of the vocabulary (checked when loaded): what is missing is one
      // character, standing for one byte.
      if (unknown_ < 0) {
        char byte[8];
        std::snprintf(byte, sizeof byte, "0x%02X", unsigned(gpt2_byte_of_code_point(decode_utf8(piece, 0).code_point)));
        throw Error(std::string("tokenizer: the vocabulary has neither a piece for byte ") + byte + " (" +
                    printable(piece, '"') + ") nor an unknown token");
      }
      ids.push_back(unknown_);
    }
  }
}

void Vocab::append_gpt2(int32_t id, std::string& out) const {
  const std::string& piece = pieces_->list[size_t(id)];
  switch (types_[size_t(id)]) {
    case TokenType::kUndefined:
    case TokenType::kNormal:
    case TokenType::kByte:
      for (size_t i = 0; i < piece.size();) {
        const Utf8Char c = decode_utf8(piece, i);
        if (c.length == 0) {  // not byte-level text: keep the byte
          out += piece[i++];
          continue;
        }
        if (const int byte = gpt2_byte_of_code_point(c.code_point); byte >= 0) {
          out += char(byte);
        } else {
          out.append(piece, i, c.length);
        }
        i += c.length;
      }
      break;
    case TokenType::kUserDefined: out += piece; break;  // added tokens are stored as plain text
    case TokenType::kUnknown: out += kUnknownPiece; break;
    case TokenType::kControl:
    case TokenType::kUnused: break;
  }
}

}  // namespace tg::model
