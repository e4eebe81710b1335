// A vocabulary from a GGUF file's `tokenizer.ggml.*` keys, and back (llama.cpp's llama-vocab.cpp
// reads the same keys with the same defaults).
#include <memory>
#include <optional>

#include "bpe_merges.h"
#include "pretokenizer.h"
#include "printable.h"
#include "tilegraph/core/error.h"
#include "tilegraph/model/gguf_keys.h"
#include "tilegraph/model/vocab.h"

namespace tg::model {

namespace {

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
  const GgufValue* tokens = file.find(gguf_keys::kTokens);
  if (!tokens) return std::nullopt;
  const GgufValue* model = file.find(gguf_keys::kTokenizerModel);
  const std::string model_name = model && model->type() == GgufType::STRING ? model->get<std::string>() : "";
  Vocab v;
  if (model_name == "llama") {
    v.kind_ = Kind::kSentencePiece;
  } else if (model_name == "gpt2") {
    v.kind_ = Kind::kBytePairGpt2;
  } else {
    if (unsupported)
      *unsupported = model ? printable(model_name.empty() ? model->describe() : model_name, '"') : "none";
    return std::nullopt;
  }
  if (!tokens->is_array() || tokens->element_type() != GgufType::STRING) {
    throw Error(file.source() + ": tokenizer.ggml.tokens must be an array of strings, got " + tokens->describe());
  }
  v.set_pieces(tokens->get_array<std::string>());
  const size_t n = size_t(v.size());
  if (n == 0) throw Error(file.source() + ": tokenizer.ggml.tokens is empty");
  if (n > size_t(INT32_MAX))
    throw Error(file.source() + ": tokenizer.ggml.tokens has more tokens than int32 ids can name");

  const std::vector<float>* scores = optional_array<float>(file, gguf_keys::kScores, n);
  v.scores_ = scores ? *scores : std::vector<float>(n, 0.0f);
  v.types_.assign(n, TokenType::kNormal);
  if (const std::vector<int32_t>* types = optional_array<int32_t>(file, gguf_keys::kTokenType, n)) {
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
      throw Error(file.source() + ": " + std::string(key) + " is " + std::to_string(id) +
                  ", outside the vocabulary of " + std::to_string(n) + " tokens");
    }
    return int32_t(id);
  };
  const auto flag = [&](std::string_view key, bool fallback) {
    const GgufValue* value = file.find(key);
    if (!value) return fallback;
    if (value->type() != GgufType::BOOL)
      throw Error(file.source() + ": " + std::string(key) + " must be a bool, got " + value->describe());
    return value->get<bool>();
  };
  const bool spm = v.kind_ == Kind::kSentencePiece;
  const PretokenizerKind* pretokenizer = nullptr;
  if (!spm) {
    const GgufValue* pre = file.find(gguf_keys::kTokenizerPre);
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
  v.bos_ = special(gguf_keys::kBosId, spm ? 1 : -1);
  v.eos_ = special(gguf_keys::kEosId, spm ? 2 : -1);
  v.unknown_ = special(gguf_keys::kUnknownId, spm ? 0 : -1);
  v.eot_ = special(gguf_keys::kEotId, -1);
  v.eom_ = special(gguf_keys::kEomId, -1);
  v.add_bos_ = flag(gguf_keys::kAddBos, spm || (pretokenizer && pretokenizer->adds_bos)) && v.bos_ >= 0;
  v.add_eos_ = flag(gguf_keys::kAddEos, false) && v.eos_ >= 0;
  v.add_space_prefix_ = flag(gguf_keys::kAddSpacePrefix, spm);
  if (const GgufValue* merges = file.find(gguf_keys::kMerges); merges && !spm) {
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

void Vocab::write_to(GgufWriter& w) const {
  std::vector<int32_t> types;
  types.reserve(types_.size());
  for (TokenType t : types_) types.push_back(int32_t(t));
  w.set(gguf_keys::kTokenizerModel, kind_ == Kind::kSentencePiece ? "llama" : "gpt2");
  w.set(gguf_keys::kTokens, pieces_->list);
  w.set(gguf_keys::kScores, scores_);
  w.set(gguf_keys::kTokenType, std::move(types));
  if (bos_ >= 0) w.set(gguf_keys::kBosId, uint32_t(bos_));
  if (eos_ >= 0) w.set(gguf_keys::kEosId, uint32_t(eos_));
  if (unknown_ >= 0) w.set(gguf_keys::kUnknownId, uint32_t(unknown_));
  if (eot_ >= 0) w.set(gguf_keys::kEotId, uint32_t(eot_));
  if (eom_ >= 0) w.set(gguf_keys::kEomId, uint32_t(eom_));
  if (kind_ == Kind::kBytePairGpt2) {
    w.set(gguf_keys::kTokenizerPre, pretokenizer_name_);
    if (merges_) w.set(gguf_keys::kMerges, merges_->rules());
    w.set(gguf_keys::kAddBos, add_bos_);  // its default depends on the pre-tokenizer
  }
  if (add_eos_) w.set(gguf_keys::kAddEos, true);
}

}  // namespace tg::model
