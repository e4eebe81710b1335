#include "pretokenizer.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <string>

#include "tilegraph/core/error.h"
#include "tilegraph/core/utf8.h"

namespace tg::model {

namespace {

constexpr std::string_view kReplacement = "\xef\xbf\xbd";  // U+FFFD

std::string pcre2_message(int code) {
  PCRE2_UCHAR buffer[256];
  const int length = pcre2_get_error_message(code, buffer, sizeof buffer);
  return length < 0 ? "PCRE2 error " + std::to_string(code)
                    : std::string(reinterpret_cast<const char*>(buffer), size_t(length));
}

// PCRE2's UTF mode needs valid UTF-8: `text` with each byte that is not part of a valid character
// replaced by U+FFFD, and where each byte of that subject came from in `text` (plus the end).
struct Subject {
  std::string bytes;
  std::vector<size_t> source_offset;
};

Subject valid_utf8_subject(std::string_view text) {
  Subject s;
  s.bytes.reserve(text.size());
  s.source_offset.reserve(text.size() + 1);
  for (size_t i = 0; i < text.size();) {
    const size_t length = decode_utf8(text, i).length;
    if (length == 0) {
      s.bytes += kReplacement;
      s.source_offset.insert(s.source_offset.end(), kReplacement.size(), i);
      ++i;
      continue;
    }
    s.bytes.append(text, i, length);
    for (size_t k = 0; k < length; ++k) s.source_offset.push_back(i + k);
    i += length;
  }
  s.source_offset.push_back(text.size());
  return s;
}

}  // namespace

void Pretokenizer::CodeDeleter::operator()(pcre2_code* code) const { pcre2_code_free(code); }

Pretokenizer::Pretokenizer(std::string_view pattern) {
  int error = 0;
  PCRE2_SIZE error_offset = 0;
  code_.reset(pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(), PCRE2_UTF | PCRE2_UCP, &error,
                            &error_offset, nullptr));
  if (!code_) {
    throw Error("tokenizer: the pre-tokenizer pattern does not compile at offset " + std::to_string(error_offset) +
                ": " + pcre2_message(error));
  }
}

std::vector<std::string_view> Pretokenizer::split(std::string_view text) const {
  const Subject subject = valid_utf8_subject(text);
  const std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> match(
      pcre2_match_data_create_from_pattern(code_.get(), nullptr), &pcre2_match_data_free);
  if (!match) throw Error("tokenizer: out of memory for the pre-tokenizer's match data");

  std::vector<std::string_view> words;
  const auto add = [&](size_t begin, size_t end) {  // subject offsets, at character boundaries
    const size_t from = subject.source_offset[begin];
    words.push_back(text.substr(from, subject.source_offset[end] - from));
  };
  const auto* bytes = reinterpret_cast<PCRE2_SPTR>(subject.bytes.data());
  size_t offset = 0;
  while (offset < subject.bytes.size()) {
    const int matched =
        pcre2_match(code_.get(), bytes, subject.bytes.size(), offset, PCRE2_NO_UTF_CHECK, match.get(), nullptr);
    if (matched == PCRE2_ERROR_NOMATCH) break;
    if (matched < 0) throw Error("tokenizer: the pre-tokenizer failed: " + pcre2_message(matched));
    const PCRE2_SIZE* span = pcre2_get_ovector_pointer(match.get());
    if (span[1] <= span[0]) {  // an empty match would never advance
      throw Error("tokenizer: the pre-tokenizer's pattern matched no text at offset " + std::to_string(span[0]));
    }
    if (span[0] > offset) add(offset, span[0]);
    add(span[0], span[1]);
    offset = span[1];
  }
  if (offset < subject.bytes.size()) add(offset, subject.bytes.size());
  return words;
}

const std::string_view kSupportedPretokenizers =
    "default, gpt2, gpt-2 (GPT-2's regex); llama3, llama-v3, llama-bpe, falcon3, falcon-h1, pixtral, midm-2.0, lfm2 "
    "(llama 3's regex and whole-word look-up); smaug-bpe, dbrx (llama 3's regex alone); qwen2, deepseek-r1-qwen, "
    "stablelm2 (Qwen2's regex)";

const PretokenizerKind* pretokenizer_kind(std::string_view name) {
  static constexpr PretokenizerKind kGpt2{kGpt2Pattern, false, false};
  static constexpr PretokenizerKind kLlama3{kLlama3Pattern, true, true};
  static constexpr PretokenizerKind kLlama3RegexOnly{kLlama3Pattern, false, false};
  if (name == "default" || name == "gpt2" || name == "gpt-2") return &kGpt2;
  for (std::string_view llama3 :
       {"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2"}) {
    if (name == llama3) return &kLlama3;
  }
  if (name == "smaug-bpe" || name == "dbrx") return &kLlama3RegexOnly;
  static constexpr PretokenizerKind kQwen2{kQwen2Pattern, false, false};
  if (name == "qwen2" || name == "deepseek-r1-qwen" || name == "stablelm2") return &kQwen2;
  return nullptr;
}

}  // namespace tg::model
