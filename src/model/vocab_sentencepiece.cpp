// SentencePiece vocabularies (`tokenizer.ggml.model = "llama"`): a space prefix, spaces as U+2581,
// the highest-scoring adjacent pair merged first, byte tokens for what no piece covers.
#include <charconv>
#include <cstdio>
#include <optional>

#include "pair_merge.h"
#include "printable.h"
#include "tilegraph/core/error.h"
#include "tilegraph/model/vocab.h"
#include "vocab_pieces.h"

namespace tg::model {

std::string byte_piece(unsigned char byte) {
  char piece[8];
  std::snprintf(piece, sizeof piece, "<0x%02X>", byte);
  return piece;
}

// A byte token's value, or -1 when `piece` is not "<0xNN>".
int byte_of_piece(std::string_view piece) {
  if (piece.size() != 6 || piece.substr(0, 3) != "<0x" || piece[5] != '>') return -1;
  unsigned value = 0;
  const auto [end, error] = std::from_chars(piece.data() + 3, piece.data() + 5, value, 16);
  return error == std::errc() && end == piece.data() + 5 ? int(value) : -1;
}

Vocab Vocab::minimal_sentencepiece(int64_t n_vocab) {
  if (n_vocab < 3) {
    throw Error("llama: a llama tokenizer needs at least 3 tokens (<unk>, <s>, </s>), n_vocab is " +
                std::to_string(n_vocab));
  }
  Vocab v;
  std::vector<std::string> pieces;
  const auto add = [&](std::string piece, float score, TokenType type) {
    pieces.push_back(std::move(piece));
    v.scores_.push_back(score);
    v.types_.push_back(type);
  };
  add("<unk>", 0.0f, TokenType::kUnknown);
  add("<s>", 0.0f, TokenType::kControl);
  add("</s>", 0.0f, TokenType::kControl);
  // Byte-fallback tokens first, as SentencePiece vocabularies have them.
  const auto count = [&] { return int64_t(pieces.size()); };
  for (int byte = 0; byte < 256 && count() < n_vocab; ++byte)
    add(byte_piece(static_cast<unsigned char>(byte)), 0.0f, TokenType::kByte);
  if (count() < n_vocab) add(std::string(kWordStart), 0.0f, TokenType::kNormal);  // a space, not its three bytes
  while (count() < n_vocab) {
    const int64_t id = count();
    add(std::string(kWordStart) + "t" + std::to_string(id), -float(id), TokenType::kNormal);
  }
  v.unknown_ = 0, v.bos_ = 1, v.eos_ = 2;
  v.add_bos_ = v.add_space_prefix_ = true;
  v.set_pieces(std::move(pieces));
  v.index_special_tokens();
  return v;
}

void Vocab::encode_sentencepiece(std::string_view text, bool space_prefix, std::vector<int32_t>& ids) const {
  if (text.empty()) return;

  std::string escaped;
  if (space_prefix) escaped += kWordStart;
  for (char c : text) {
    if (c == ' ') {
      escaped += kWordStart;
    } else {
      escaped += c;
    }
  }

  // The highest-scoring adjacent pair that is a piece of the vocabulary merges first.
  const auto score = [this](std::string_view left, std::string_view right) -> std::optional<double> {
    const int32_t id = find(std::string_view(left.data(), left.size() + right.size()));  // adjacent in `escaped`
    if (id < 0) return std::nullopt;
    return scores_[size_t(id)];
  };
  for (const std::string_view piece : merge_adjacent_pieces(escaped, score)) {
    if (const int32_t id = find(piece); id >= 0) {
      ids.push_back(id);
      continue;
    }
    for (char byte : piece) {  // byte fallback, else the unknown token
      const int32_t id = find(byte_piece(static_cast<unsigned char>(byte)));
      if (id < 0 && unknown_ < 0) {
        throw Error("tokenizer: the vocabulary has neither a byte token nor an unknown token for byte " +
                    printable(std::string_view(&byte, 1), '\''));
      }
      ids.push_back(id >= 0 ? id : unknown_);
    }
  }
}

void Vocab::append_sentencepiece(int32_t id, std::string& out) const {
  const std::string& piece = pieces_->list[size_t(id)];
  switch (types_[size_t(id)]) {
    case TokenType::kUndefined:
    case TokenType::kNormal:
    case TokenType::kUserDefined:
      for (size_t i = 0; i < piece.size();) {
        if (piece.compare(i, kWordStart.size(), kWordStart) == 0) {
          out += ' ';
          i += kWordStart.size();
        } else {
          out += piece[i++];
        }
      }
      break;
    case TokenType::kUnknown: out += kUnknownPiece; break;
    case TokenType::kByte:
      if (const int byte = byte_of_piece(piece); byte >= 0) {
        out += char(byte);
      } else {
        out += piece;
      }
      break;
    case TokenType::kControl:
    case TokenType::kUnused: break;
  }
}

}  // namespace tg::model
