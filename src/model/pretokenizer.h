#pragma once
// A byte-level BPE vocabulary's pre-tokenizer: a regex that cuts text into words (pre-tokens)
// before any merge, so that no piece spans a word boundary. Runs on PCRE2 with Unicode
// properties (\p{L}, \p{N}, \s as Unicode whitespace) and lookahead, as the tokenizers that
// define these patterns do.
#include <memory>
#include <string_view>
#include <vector>

struct pcre2_real_code_8;  // pcre2_code with PCRE2_CODE_UNIT_WIDTH 8, kept out of this header

namespace tg::model {

// GPT-2's pattern: contractions, then letters, digits or other symbols each with an optional
// leading space, then whitespace not followed by a word (so the last space joins the next word).
inline constexpr std::string_view kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
// llama 3's (tiktoken's cl100k-style) pattern, with the contractions' case spelled out as
// llama.cpp does rather than as (?i:...): Unicode case folding would also let 'ſ (U+017F) match 's.
// Letters take one leading non-letter-non-digit, digits come in groups of at most three, and
// newlines stay with the whitespace or punctuation before them.
inline constexpr std::string_view kLlama3Pattern =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
// Qwen2's: llama 3's with every digit on its own.
inline constexpr std::string_view kQwen2Pattern =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// The byte-level pre-tokenizers llama.cpp knows by their `tokenizer.ggml.pre` names.
struct PretokenizerKind {
  std::string_view pattern;
  bool whole_words_first;  // llama.cpp's ignore_merges: a word that is a piece is not merged
  bool adds_bos;           // tokenizer.ggml.add_bos_token's default
};
// The kind named `name` (llama.cpp's groups of names, llm_tokenizer_bpe's pre-tokenizer types),
// or null for a name it does not know.
const PretokenizerKind* pretokenizer_kind(std::string_view name);
// The names pretokenizer_kind knows, for an error message.
extern const std::string_view kSupportedPretokenizers;

class Pretokenizer {
 public:
  // Compiles `pattern` (UTF-8, Unicode properties); one that PCRE2 rejects throws tg::Error.
  explicit Pretokenizer(std::string_view pattern);

  // `text` cut into consecutive non-empty words that together are exactly `text`: each match of
  // the pattern, and any text between matches as a word of its own (the two patterns above
  // match every character, so they leave none). Bytes that are not valid UTF-8 are matched as
  // U+FFFD would be, but the words keep the original bytes. A match of no text throws tg::Error
  // rather than loop.
  std::vector<std::string_view> split(std::string_view text) const;

 private:
  struct CodeDeleter {
    void operator()(pcre2_real_code_8* code) const;
  };
  std::unique_ptr<pcre2_real_code_8, CodeDeleter> code_;
};

}  // namespace tg::model
