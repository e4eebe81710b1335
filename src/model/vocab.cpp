// What every vocabulary shares: its pieces and their index, special tokens, cutting the text at
// them, and decoding. Loading and writing a vocabulary is in vocab_gguf.cpp; each tokenizer's
// encoding and decoding in vocab_sentencepiece.cpp and vocab_byte_level.cpp.
#include "tilegraph/model/vocab.h"

#include <algorithm>
#include <cstdio>

#include "pretokenizer.h"
#include "printable.h"
#include "tilegraph/core/error.h"
#include "tilegraph/core/utf8.h"

namespace tg::model {

namespace {

constexpr std::string_view kReplacement = "\xef\xbf\xbd";  // U+FFFD
// Tokens that end generation whatever the keys say (llama.cpp's end-of-generation texts).
constexpr std::string_view kEndMarkers[] = {"<|eot_id|>",    "<|im_end|>", "<|end|>", "<end_of_turn>",
                                            "<|endoftext|>", "<|eom_id|>", "<EOT>",   "_<EOT>"};

}  // namespace

void Vocab::set_pieces(std::vector<std::string> list) {
  auto pieces = std::make_shared<Pieces>();
  pieces->list = std::move(list);
  pieces->index.reserve(pieces->list.size());
  // A repeated piece: the last id, as llama.cpp.
  for (size_t i = 0; i < pieces->list.size(); ++i) pieces->index[pieces->list[i]] = int32_t(i);
  pieces_ = std::move(pieces);
}

int32_t Vocab::find(std::string_view piece) const {
  const auto it = pieces_->index.find(piece);
  return it == pieces_->index.end() ? -1 : it->second;
}

void Vocab::index_special_tokens() {
  special_tokens_.clear();
  for (int32_t id = 0; id < int32_t(types_.size()); ++id) {
    const TokenType type = types_[size_t(id)];
    const bool special = type == TokenType::kUserDefined || type == TokenType::kControl || type == TokenType::kUnknown;
    if (special && !pieces_->list[size_t(id)].empty()) special_tokens_.push_back(id);
  }
  // Longest first, as llama.cpp; of equal lengths the lower id first (llama.cpp leaves that order
  // to its sort).
  std::stable_sort(special_tokens_.begin(), special_tokens_.end(),
                   [this](int32_t a, int32_t b) { return piece(a).size() > piece(b).size(); });

  end_of_generation_.clear();
  for (int32_t id : {eos_, eot_, eom_}) {
    if (id >= 0) end_of_generation_.push_back(id);
  }
  for (std::string_view marker : kEndMarkers) {
    if (const int32_t id = find(marker); id >= 0) end_of_generation_.push_back(id);
  }
  std::sort(end_of_generation_.begin(), end_of_generation_.end());
  end_of_generation_.erase(std::unique(end_of_generation_.begin(), end_of_generation_.end()), end_of_generation_.end());
}

namespace {

// A piece of the text to encode, or a special token found in it (id >= 0).
struct Fragment {
  std::string_view text;
  int32_t id = -1;
  bool parse_special = false;  // whether control tokens may be found in `text`
};

// `fragments` with every occurrence of `token` (id `id`) in their text cut out as a fragment of
// its own, left to right.
// Control tokens are cut only out of fragments that allow them.
std::vector<Fragment> split_on(const std::vector<Fragment>& fragments, std::string_view token, int32_t id,
                               bool control) {
  std::vector<Fragment> out;
  for (const Fragment& f : fragments) {
    if (f.id >= 0 || (control && !f.parse_special)) {
      out.push_back(f);
      continue;
    }
    std::string_view rest = f.text;
    for (size_t at; (at = rest.find(token)) != std::string_view::npos; rest.remove_prefix(at + token.size())) {
      if (at > 0) out.push_back({rest.substr(0, at), -1, f.parse_special});
      out.push_back({token, id});
    }
    if (!rest.empty()) out.push_back({rest, -1, f.parse_special});
  }
  return out;
}

}  // namespace

std::vector<int32_t> Vocab::encode(std::string_view text, bool parse_special) const {
  const TextPart part{text, parse_special};
  return encode(std::span(&part, 1));
}

std::vector<int32_t> Vocab::encode(std::span<const TextPart> parts) const {
  // Whatever the text (the empty one too), so that a vocabulary that cannot encode says so at once.
  if (kind_ == Kind::kBytePairGpt2 && !pretokenizer_) {
    throw Error("tokenizer: the pre-tokenizer " + printable(pretokenizer_name_, '"') +
                " (tokenizer.ggml.pre) is not supported; supported: " + std::string(kSupportedPretokenizers));
  }
  if (kind_ == Kind::kBytePairGpt2 && !merges_) {
    throw Error(
        "tokenizer: this gpt2 vocabulary has no tokenizer.ggml.merges, so it cannot encode text (pass token ids)");
  }
  std::vector<int32_t> ids;
  if (add_bos_) ids.push_back(bos_);
  // The parts are copied into one text, so that the fragments of neighbouring parts that no
  // special token separates are adjacent in it and encoded together.
  std::string text;
  for (const TextPart& part : parts) text += part.text;
  std::vector<Fragment> fragments;
  size_t offset = 0;
  for (const TextPart& part : parts) {
    if (!part.text.empty()) {
      fragments.push_back({std::string_view(text).substr(offset, part.text.size()), -1, part.parse_special});
    }
    offset += part.text.size();
  }
  for (int32_t id : special_tokens_) {
    fragments = split_on(fragments, piece(id), id, types_[size_t(id)] != TokenType::kUserDefined);
  }
  std::vector<Fragment> joined;
  for (const Fragment& f : fragments) {
    if (f.id < 0 && !joined.empty() && joined.back().id < 0) {
      const std::string_view last = joined.back().text;
      joined.back().text = std::string_view(last.data(), last.size() + f.text.size());
    } else {
      joined.push_back(f);
    }
  }
  bool after_special = true;  // the text's start counts as one: SentencePiece prefixes a space
  for (const Fragment& f : joined) {
    if (f.id >= 0) {
      ids.push_back(f.id);
      after_special = true;
      continue;
    }
    if (kind_ == Kind::kSentencePiece) {
      encode_sentencepiece(f.text, add_space_prefix_ && after_special, ids);
    } else {
      encode_byte_level(f.text, ids);
    }
    after_special = false;
  }
  if (add_eos_) ids.push_back(eos_);
  return ids;
}

std::string Vocab::decode(std::span<const int32_t> ids) const {
  std::string out;
  for (int32_t id : ids) {
    if (id < 0 || id >= size()) {
      throw Error("tokenizer: token id " + std::to_string(id) + " is outside the vocabulary of " +
                  std::to_string(size()) + " tokens");
    }
    if (kind_ == Kind::kSentencePiece) {
      append_sentencepiece(id, out);
    } else {
      append_gpt2(id, out);
    }
  }
  return out;
}

std::string terminal_text(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const Utf8Char c = decode_utf8(text, i);
    if (c.length == 0) {
      out += kReplacement;
      ++i;
      continue;
    }
    const bool control = c.code_point < 0x20 || (c.code_point >= 0x7f && c.code_point < 0xa0);
    if (control && c.code_point != '\n' && c.code_point != '\t') {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", unsigned(c.code_point));
      out += escaped;
    } else {
      out.append(text, i, c.length);
    }
    i += c.length;
  }
  return out;
}

}  // namespace tg::model
