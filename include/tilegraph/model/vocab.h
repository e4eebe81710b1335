#pragma once
// A llama-family model's vocabulary, from its `tokenizer.ggml.*` keys: text to token ids for
// SentencePiece vocabularies (`tokenizer.ggml.model = "llama"`, llama 1 and 2), token ids back
// to text for those and for byte-level BPE ones (`"gpt2"`, llama 3). Encoding follows
// llama.cpp's SentencePiece tokenizer: a space prefix, spaces as U+2581, the highest-scoring
// adjacent pair merged first, byte tokens for what no piece covers.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tilegraph/model/gguf.h"

namespace tg::model {

// llama.cpp's token types (`tokenizer.ggml.token_type`).
enum class TokenType : int32_t {
  kUndefined = 0,
  kNormal = 1,
  kUnknown = 2,
  kControl = 3,
  kUserDefined = 4,
  kUnused = 5,
  kByte = 6,
};

class Vocab {
 public:
  enum class Kind { kSentencePiece, kBytePairGpt2 };

  // Null when the file has no `tokenizer.ggml.tokens`, or a tokenizer model other than "llama"
  // and "gpt2" (`unsupported`, if given, then names it). Keys of the wrong type or length, and
  // special token ids out of range, throw tg::Error naming the key.
  static std::optional<Vocab> from_gguf(const GgufFile& file, std::string* unsupported = nullptr);
  // The minimal SentencePiece vocabulary of `n_vocab` >= 3 tokens that gguf-gen writes: <unk>,
  // <s>, </s>, the byte tokens <0x00>.., the space "\u2581", then unique filler pieces "\u2581t<id>".
  static Vocab minimal_sentencepiece(int64_t n_vocab);
  // The `tokenizer.ggml.*` keys of this vocabulary.
  void write_to(GgufWriter& writer) const;

  Kind kind() const { return kind_; }
  int64_t size() const { return int64_t(pieces_.size()); }
  const std::string& piece(int32_t id) const { return pieces_.at(size_t(id)); }
  TokenType type(int32_t id) const { return types_.at(size_t(id)); }
  int32_t bos() const { return bos_; }  // -1: none
  int32_t eos() const { return eos_; }  // -1: none

  // Token ids of `text` (UTF-8; other bytes become byte tokens), after the beginning-of-sequence
  // token when the vocabulary adds one. SentencePiece only: a gpt2 vocabulary throws tg::Error.
  std::vector<int32_t> encode(std::string_view text) const;
  // The bytes the tokens stand for; control and unused tokens stand for nothing. An id out of
  // range throws tg::Error. A byte token may end inside a UTF-8 character: the result is bytes,
  // not necessarily valid UTF-8.
  std::string decode(std::span<const int32_t> ids) const;

 private:
  Vocab() = default;
  void index_pieces();
  int32_t find(std::string_view piece) const;  // -1 when absent
  void append_sentencepiece(int32_t id, std::string& out) const;
  void append_gpt2(int32_t id, std::string& out) const;

  Kind kind_ = Kind::kSentencePiece;
  std::vector<std::string> pieces_;
  std::vector<float> scores_;
  std::vector<TokenType> types_;
  std::unordered_map<std::string_view, int32_t> index_;  // views into pieces_
  int32_t bos_ = -1, eos_ = -1, unknown_ = -1;
  bool add_bos_ = false;
  bool add_space_prefix_ = false;
};

// `text` as a terminal can show it: valid UTF-8, newlines and tabs are kept; bytes that are not
// valid UTF-8 become U+FFFD, other control characters \xNN, so that model output cannot move
// the cursor or change the terminal's state.
std::string terminal_text(std::string_view text);

}  // namespace tg::model
