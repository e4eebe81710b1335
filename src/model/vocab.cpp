#include "tilegraph/model/vocab.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <optional>

#include "model/bpe_bytes.h"
#include "model/bpe_merges.h"
#include "model/pair_merge.h"
#include "model/pretokenizer.h"
#include "model/printable.h"
#include "tilegraph/core/error.h"
#include "tilegraph/core/utf8.h"

namespace tg::model {

namespace {

constexpr std::string_view kWordStart = "\xe2\x96\x81";  // U+2581, SentencePiece's space
constexpr std::string_view kReplacement = "\xef\xbf\xbd";  // U+FFFD
constexpr std::string_view kUnknownPiece = "\xe2\x96\x85";  // U+2585, what llama.cpp shows for <unk>
// Tokens that end generation whatever the keys say (llama.cpp's end-of-generation texts).
constexpr std::string_view kEndMarkers[] = {"<|eot_id|>",    "<|im_end|>", "<|end|>", "<end_of_turn>",
                                            "<|endoftext|>", "<|eom_id|>", "<EOT>",   "_<EOT>"};

// The byte-level pre-tokenizers llama.cpp knows by these `tokenizer.ggml.pre` names.
struct PretokenizerKind {
  std::string_view pattern;
  bool whole_words_first;  // llama.cpp's ignore_merges: a word that is a piece is not merged
  bool adds_bos;           // tokenizer.ggml.add_bos_token's default
};
constexpr std::string_view kSupportedPretokenizers =
    "default, gpt2, gpt-2 (GPT-2's regex); llama3, llama-v3, llama-bpe, falcon3, falcon-h1, pixtral, midm-2.0, lfm2 "
    "(llama 3's regex and whole-word look-up); smaug-bpe, dbrx (llama 3's regex alone); qwen2, deepseek-r1-qwen, "
    "stablelm2 (Qwen2's regex)";

// llama.cpp's groups of names (llama-vocab.cpp, llm_tokenizer_bpe's pre-tokenizer types).
const PretokenizerKind* pretokenizer_kind(std::string_view name) {
  static constexpr PretokenizerKind kGpt2{kGpt2Pattern, false, false};
  static constexpr PretokenizerKind kLlama3{kLlama3Pattern, true, true};
  static constexpr PretokenizerKind kLlama3RegexOnly{kLlama3Pattern, false, false};
  if (name == "default" || name == "gpt2" || name == "gpt-2") return &kGpt2;
  for (std::string_view llama3 : {"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2"}) {
    if (name == llama3) return &kLlama3;
  }
  if (name == "smaug-bpe" || name == "dbrx") return &kLlama3RegexOnly;
  static constexpr PretokenizerKind kQwen2{kQwen2Pattern, false, false};
  if (name == "qwen2" || name == "deepseek-r1-qwen" || name == "stablelm2") return &kQwen2;
  return nullptr;
}

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

template <class T>
const std::vector<T>* optional_array(const GgufFile& file, std::string_view key, size_t n) {
  const GgufValue* value = file.find(key);
  if (!value) return nullptr;
  if (!value->is_array() || value->element_type() != GgufTypeOf<T>::value || value->array_size() != n) {
    throw Error(file.source() + ": " + std::string(key) + " must be an array of " + std::to_string(n) + " " +
                std::string(gguf_type_name(GgufTypeOf<T>::value)) + ", got " + value->describe());
  }
  return &value->get_array<T>();
}

}  // namespace

std::optional<Vocab> Vocab::from_gguf(const GgufFile& file, std::string* unsupported) {
  const GgufValue* tokens = file.find("tokenizer.ggml.tokens");
  if (!tokens) return std::nullopt;
  const GgufValue* model = file.find("tokenizer.ggml.model");
  const std::string model_name = model && model->type() == GgufType::STRING ? model->get<std::string>() : "";
  Vocab v;
  if (model_name == "llama") {
    v.kind_ = Kind::kSentencePiece;
  } else if (model_name == "gpt2") {
    v.kind_ = Kind::kBytePairGpt2;
  } else {
    if (unsupported) *unsupported = model ? printable(model_name.empty() ? model->describe() : model_name, '"') : "none";
    return std::nullopt;
  }
  if (!tokens->is_array() || tokens->element_type() != GgufType::STRING) {
    throw Error(file.source() + ": tokenizer.ggml.tokens must be an array of strings, got " + tokens->describe());
  }
  v.set_pieces(tokens->get_array<std::string>());
  const size_t n = size_t(v.size());
  if (n == 0) throw Error(file.source() + ": tokenizer.ggml.tokens is empty");
  if (n > size_t(INT32_MAX)) throw Error(file.source() + ": tokenizer.ggml.tokens has more tokens than int32 ids can name");

  const std::vector<float>* scores = optional_array<float>(file, "tokenizer.ggml.scores", n);
  v.scores_ = scores ? *scores : std::vector<float>(n, 0.0f);
  v.types_.assign(n, TokenType::kNormal);
  if (const std::vector<int32_t>* types = optional_array<int32_t>(file, "tokenizer.ggml.token_type", n)) {
    for (size_t i = 0; i < n; ++i) {
      if ((*types)[i] < 0 || (*types)[i] > int32_t(TokenType::kByte)) {
        throw Error(file.source() + ": tokenizer.ggml.token_type[" + std::to_string(i) + "] is " +
                    std::to_string((*types)[i]) + ", not a token type (0..6)");
      }
      v.types_[i] = TokenType((*types)[i]);
    }
  }
  // A special token id: absent, or -1 / 0xffffffff (llama.cpp's "none"), mean none.
  const auto special = [&](std::string_view key, int32_t fallback) -> int32_t {
    const GgufValue* value = file.find(key);
    if (!value) return fallback < int32_t(n) ? fallback : -1;
    int64_t id;
    try {
      id = value->to_int();
    } catch (const Error&) {
      throw Error(file.source() + ": " + std::string(key) + " must be an integer, got " + value->describe());
    }
    if (id == -1 || id == int64_t(UINT32_MAX)) return -1;
    if (id < 0 || id >= int64_t(n)) {
      throw Error(file.source() + ": " + std::string(key) + " is " + std::to_string(id) + ", outside the vocabulary of " +
                  std::to_string(n) + " tokens");
    }
    return int32_t(id);
  };
  const auto flag = [&](std::string_view key, bool fallback) {
    const GgufValue* value = file.find(key);
    if (!value) return fallback;
    if (value->type() != GgufType::BOOL) throw Error(file.source() + ": " + std::string(key) + " must be a bool, got " + value->describe());
    return value->get<bool>();
  };
  const bool spm = v.kind_ == Kind::kSentencePiece;
  const PretokenizerKind* pretokenizer = nullptr;
  if (!spm) {
    const GgufValue* pre = file.find("tokenizer.ggml.pre");
    if (pre && pre->type() != GgufType::STRING) {
      throw Error(file.source() + ": tokenizer.ggml.pre must be a string, got " + pre->describe());
    }
    v.pretokenizer_name_ = pre ? pre->get<std::string>() : "default";
    pretokenizer = pretokenizer_kind(v.pretokenizer_name_);
    if (pretokenizer) {
      v.pretokenizer_ = std::make_shared<const Pretokenizer>(pretokenizer->pattern);
      v.whole_words_first_ = pretokenizer->whole_words_first;
    }
  }
  // llama.cpp's defaults for each tokenizer model.
  v.bos_ = special("tokenizer.ggml.bos_token_id", spm ? 1 : -1);
  v.eos_ = special("tokenizer.ggml.eos_token_id", spm ? 2 : -1);
  v.unknown_ = special("tokenizer.ggml.unknown_token_id", spm ? 0 : -1);
  v.eot_ = special("tokenizer.ggml.eot_token_id", -1);
  v.eom_ = special("tokenizer.ggml.eom_token_id", -1);
  v.add_bos_ = flag("tokenizer.ggml.add_bos_token", spm || (pretokenizer && pretokenizer->adds_bos)) && v.bos_ >= 0;
  v.add_eos_ = flag("tokenizer.ggml.add_eos_token", false) && v.eos_ >= 0;
  v.add_space_prefix_ = flag("tokenizer.ggml.add_space_prefix", spm);
  if (const GgufValue* merges = file.find("tokenizer.ggml.merges"); merges && !spm) {
    if (!merges->is_array() || merges->element_type() != GgufType::STRING) {
      throw Error(file.source() + ": tokenizer.ggml.merges must be an array of strings, got " + merges->describe());
    }
    v.merges_ = std::make_shared<const BpeMerges>(
        merges->get_array<std::string>(), [&v](std::string_view piece) { return v.find(piece) >= 0; },
        file.source() + ": tokenizer.ggml.merges");
  }
  v.index_special_tokens();
  return v;
}

Vocab Vocab::minimal_sentencepiece(int64_t n_vocab) {
  if (n_vocab < 3) {
    throw Error("llama: a llama tokenizer needs at least 3 tokens (<unk>, <s>, </s>), n_vocab is " + std::to_string(n_vocab));
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
  for (int byte = 0; byte < 256 && count() < n_vocab; ++byte) add(byte_piece(static_cast<unsigned char>(byte)), 0.0f, TokenType::kByte);
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
  static constexpr std::string_view kRules[] = {"\xc4\xa0 t", "h e", "i n", "\xc4\xa0t he", "e r", "\xc4\xa0 a",
                                                "o n", "\xc4\xa0 s", "r e", "a t", "\xc4\xa0 w", "o r"};
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
  while (int64_t(pieces.size() + specials.size()) < n_vocab) add(space + "t" + std::to_string(pieces.size()), TokenType::kNormal);
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

void Vocab::write_to(GgufWriter& w) const {
  std::vector<int32_t> types;
  types.reserve(types_.size());
  for (TokenType t : types_) types.push_back(int32_t(t));
  w.set("tokenizer.ggml.model", kind_ == Kind::kSentencePiece ? "llama" : "gpt2");
  w.set("tokenizer.ggml.tokens", pieces_->list);
  w.set("tokenizer.ggml.scores", scores_);
  w.set("tokenizer.ggml.token_type", std::move(types));
  if (bos_ >= 0) w.set("tokenizer.ggml.bos_token_id", uint32_t(bos_));
  if (eos_ >= 0) w.set("tokenizer.ggml.eos_token_id", uint32_t(eos_));
  if (unknown_ >= 0) w.set("tokenizer.ggml.unknown_token_id", uint32_t(unknown_));
  if (eot_ >= 0) w.set("tokenizer.ggml.eot_token_id", uint32_t(eot_));
  if (eom_ >= 0) w.set("tokenizer.ggml.eom_token_id", uint32_t(eom_));
  if (kind_ == Kind::kBytePairGpt2) {
    w.set("tokenizer.ggml.pre", pretokenizer_name_);
    if (merges_) w.set("tokenizer.ggml.merges", merges_->rules());
    w.set("tokenizer.ggml.add_bos_token", add_bos_);  // its default depends on the pre-tokenizer
  }
  if (add_eos_) w.set("tokenizer.ggml.add_eos_token", true);
}

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
    throw Error("tokenizer: this gpt2 vocabulary has no tokenizer.ggml.merges, so it cannot encode text (pass token ids)");
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
        throw Error(std::string("tokenizer: the vocabulary has neither a piece for byte ") + byte + " (" + printable(piece, '"') +
                    ") nor an unknown token");
      }
      ids.push_back(unknown_);
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

std::string Vocab::decode(std::span<const int32_t> ids) const {
  std::string out;
  for (int32_t id : ids) {
    if (id < 0 || id >= size()) {
      throw Error("tokenizer: token id " + std::to_string(id) + " is outside the vocabulary of " + std::to_string(size()) + " tokens");
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
