#pragma once
// A llama-family model's vocabulary, from its `tokenizer.ggml.*` keys: text to token ids and
// back for SentencePiece vocabularies (`tokenizer.ggml.model = "llama"`, llama 1 and 2) and
// byte-level BPE ones (`"gpt2"`, llama 3), following llama.cpp's tokenizers.
//
// SentencePiece: a space prefix, spaces as U+2581, the highest-scoring adjacent pair merged
// first, byte tokens for what no piece covers.
//
// Byte-level BPE: the pre-tokenizer named by `tokenizer.ggml.pre` ("default" when absent) cuts
// the text into words with its regex; each word's bytes are spelled in GPT-2's byte alphabet
// (one character per byte) and merged by `tokenizer.ggml.merges`, the adjacent pair of the
// lowest rank first (the leftmost of equal ranks). llama 3's pre-tokenizer first looks the whole
// word up, as llama.cpp's ignore_merges does.
//
// Special tokens written in the text are found first, as llama.cpp's tokenizer_st_partition
// does: user-defined tokens always, control and unknown ones (`<|eot_id|>`, `</s>`) when the
// caller asks (encode's parse_special, what llama.cpp's CLI does for prompts). The longest token
// claims its occurrences first, left to right; the text between them is encoded as above, each
// SentencePiece fragment after a special token with its own space prefix.
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tilegraph/model/gguf.h"

namespace tg::model {

class BpeMerges;
class Pretokenizer;

// A part of a text to encode. Control tokens are found only in parts that may hold them, so that
// text from an untrusted source (a chat's user message) next to markup that holds them (the chat
// template's) cannot forge them: "</s>" typed by a user stays four characters.
struct TextPart {
  std::string_view text;
  bool parse_special = false;
};

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
  // and "gpt2" (`unsupported`, if given, then names it). Keys of the wrong type or length,
  // special token ids out of range and malformed merges (a rule that is not two pieces
  // separated by one space, or whose pieces or their concatenation are not in the vocabulary)
  // throw tg::Error naming the key. An unknown pre-tokenizer or missing merges are not errors
  // here: such a vocabulary still decodes, and encode() says why it cannot encode.
  static std::optional<Vocab> from_gguf(const GgufFile& file, std::string* unsupported = nullptr);
  // The minimal SentencePiece vocabulary of `n_vocab` >= 3 tokens that gguf-gen writes: <unk>,
  // <s>, </s>, the byte tokens <0x00>.., the space "\u2581", then unique filler pieces "\u2581t<id>".
  static Vocab minimal_sentencepiece(int64_t n_vocab);
  // Its byte-level BPE counterpart (llama 3's layout, pre-tokenizer "llama-bpe"), for n_vocab >=
  // kMinimalByteLevelSize: the 256 byte characters, a few English merges and their pieces,
  // filler pieces "Ġt<id>", then <|begin_of_text|> (BOS) and <|end_of_text|> (EOS) last.
  static Vocab minimal_byte_level(int64_t n_vocab);
  // Its Qwen2 counterpart: the same pieces and merges with pre-tokenizer "qwen2", then
  // <|endoftext|> (BOS, not added to the text), <|im_start|> and <|im_end|> (EOS) last: the
  // tokens of a ChatML turn.
  static Vocab minimal_qwen2(int64_t n_vocab);
  static constexpr int64_t kMinimalByteLevelSize = 300;
  // The `tokenizer.ggml.*` keys of this vocabulary.
  void write_to(GgufWriter& writer) const;

  Kind kind() const { return kind_; }
  int64_t size() const { return int64_t(pieces_->list.size()); }
  const std::string& piece(int32_t id) const { return pieces_->list.at(size_t(id)); }
  TokenType type(int32_t id) const { return types_.at(size_t(id)); }
  int32_t bos() const { return bos_; }                     // -1: none
  bool adds_bos() const { return add_bos_ && bos_ >= 0; }  // whether encode() starts with bos()
  int32_t eos() const { return eos_; }                     // -1: none
  // The tokens that end generation, as llama.cpp's end-of-generation set: the end of sequence,
  // `tokenizer.ggml.eot_token_id` and `eom_token_id`, and the tokens written as one of the end
  // markers llama.cpp knows (<|eot_id|>, <|im_end|>, <|end|>, <end_of_turn>, <|endoftext|>,
  // <|eom_id|>, <EOT>, _<EOT>). Ascending ids.
  const std::vector<int32_t>& end_of_generation() const { return end_of_generation_; }
  // Byte-level BPE only: the `tokenizer.ggml.pre` name, "default" when the key is absent.
  const std::string& pretokenizer_name() const { return pretokenizer_name_; }

  // Token ids of `text` (special tokens: see above), after the beginning-of-sequence token when
  // the vocabulary adds one (`tokenizer.ggml.add_bos_token`; default: yes for SentencePiece and
  // for llama 3's pre-tokenizer, no for GPT-2's), and before the end-of-sequence token when it
  // adds that (`tokenizer.ggml.add_eos_token`, default no; as llama.cpp). Bytes that are not valid UTF-8 are kept:
  // SentencePiece encodes them as byte tokens; byte-level BPE pre-tokenizes them as U+FFFD would be but encodes their
  // own bytes, so decode() gives them back. A byte no piece covers becomes the unknown token, or throws tg::Error when
  // the vocabulary has none. A byte-level vocabulary without merges or with an unsupported pre-tokenizer throws
  // tg::Error naming the key.
  std::vector<int32_t> encode(std::string_view text, bool parse_special = false) const;
  // The same for the parts' concatenation, with control and unknown tokens found only within the
  // parts that allow them (user-defined tokens within any part); text on both sides of a part
  // boundary with no special token there is encoded as one, as it would be in one part.
  std::vector<int32_t> encode(std::span<const TextPart> parts) const;
  // The bytes the tokens stand for; control and unused tokens stand for nothing. An id out of
  // range throws tg::Error. A byte token may end inside a UTF-8 character: the result is bytes,
  // not necessarily valid UTF-8.
  std::string decode(std::span<const int32_t> ids) const;

 private:
  Vocab() = default;
  void set_pieces(std::vector<std::string> pieces);
  int32_t find(std::string_view piece) const;  // -1 when absent
  // The special tokens encode() looks for, longest first, and end_of_generation().
  void index_special_tokens();
  void encode_sentencepiece(std::string_view text, bool space_prefix, std::vector<int32_t>& ids) const;
  void encode_byte_level(std::string_view text, std::vector<int32_t>& ids) const;
  void append_sentencepiece(int32_t id, std::string& out) const;
  void append_gpt2(int32_t id, std::string& out) const;

  Kind kind_ = Kind::kSentencePiece;
  // The index holds views into the list: the two are built once and shared by copies of the
  // Vocab, which keeps the views valid (a copied map would point into the original's strings).
  struct Pieces {
    std::vector<std::string> list;
    std::unordered_map<std::string_view, int32_t> index;
  };
  std::shared_ptr<const Pieces> pieces_ = std::make_shared<const Pieces>();
  std::vector<float> scores_;
  std::vector<TokenType> types_;
  int32_t bos_ = -1, eos_ = -1, unknown_ = -1;
  std::vector<int32_t> special_tokens_;  // user-defined, control and unknown, longest piece first
  int32_t eot_ = -1, eom_ = -1;
  std::vector<int32_t> end_of_generation_;
  bool add_bos_ = false, add_eos_ = false;
  bool add_space_prefix_ = false;
  // minimal_byte_level's pieces and merges with pre-tokenizer `pre`, then `specials` (control
  // tokens) last; bos and eos index `specials`.
  static Vocab minimal_bpe(int64_t n_vocab, std::string_view pre, std::span<const std::string_view> specials, int bos,
                           int eos);

  // Byte-level BPE; immutable, so copies of a Vocab share them.
  std::string pretokenizer_name_;
  std::shared_ptr<const Pretokenizer> pretokenizer_;  // null: a name this build does not know
  bool whole_words_first_ = false;                    // llama.cpp's ignore_merges
  std::shared_ptr<const BpeMerges> merges_;           // null: no tokenizer.ggml.merges
};

// `text` as a terminal can show it: valid UTF-8, newlines and tabs are kept; bytes that are not
// valid UTF-8 become U+FFFD, other control characters \xNN, so that model output cannot move
// the cursor or change the terminal's state.
std::string terminal_text(std::string_view text);

}  // namespace tg::model
