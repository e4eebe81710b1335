#pragma once
// The metadata keys tilegraph reads and writes in GGUF files, one table for the reader and the
// writer (as llama.cpp's LLM_KV_* names). Keys of an architecture are its name, a dot and the
// suffix below ("llama.context_length"): arch_key(arch, kContextLength).
#include <string>
#include <string_view>

namespace tg::model::gguf_keys {

// general.*
inline constexpr char kArchitecture[] = "general.architecture";
inline constexpr char kName[] = "general.name";
inline constexpr char kFileType[] = "general.file_type";
inline constexpr char kQuantizationVersion[] = "general.quantization_version";
inline constexpr char kAlignment[] = "general.alignment";

// <architecture>.*
inline constexpr char kVocabSize[] = "vocab_size";
inline constexpr char kContextLength[] = "context_length";
inline constexpr char kEmbeddingLength[] = "embedding_length";
inline constexpr char kBlockCount[] = "block_count";
inline constexpr char kFeedForwardLength[] = "feed_forward_length";
inline constexpr char kExpertCount[] = "expert_count";
inline constexpr char kHeadCount[] = "attention.head_count";
inline constexpr char kHeadCountKv[] = "attention.head_count_kv";
inline constexpr char kKeyLength[] = "attention.key_length";
inline constexpr char kValueLength[] = "attention.value_length";
inline constexpr char kLayerNormRmsEpsilon[] = "attention.layer_norm_rms_epsilon";
inline constexpr char kRopeDimensionCount[] = "rope.dimension_count";
inline constexpr char kRopeFreqBase[] = "rope.freq_base";
inline constexpr char kRopeScalingType[] = "rope.scaling.type";
inline constexpr char kRopeScalingFactor[] = "rope.scaling.factor";
inline constexpr char kRopeScaleLinear[] = "rope.scale_linear";  // the older name of the factor

// tokenizer.*
inline constexpr char kTokenizerModel[] = "tokenizer.ggml.model";
inline constexpr char kTokenizerPre[] = "tokenizer.ggml.pre";
inline constexpr char kTokens[] = "tokenizer.ggml.tokens";
inline constexpr char kScores[] = "tokenizer.ggml.scores";
inline constexpr char kTokenType[] = "tokenizer.ggml.token_type";
inline constexpr char kMerges[] = "tokenizer.ggml.merges";
inline constexpr char kBosId[] = "tokenizer.ggml.bos_token_id";
inline constexpr char kEosId[] = "tokenizer.ggml.eos_token_id";
inline constexpr char kUnknownId[] = "tokenizer.ggml.unknown_token_id";
inline constexpr char kEotId[] = "tokenizer.ggml.eot_token_id";
inline constexpr char kEomId[] = "tokenizer.ggml.eom_token_id";
inline constexpr char kAddBos[] = "tokenizer.ggml.add_bos_token";
inline constexpr char kAddEos[] = "tokenizer.ggml.add_eos_token";
inline constexpr char kAddSpacePrefix[] = "tokenizer.ggml.add_space_prefix";
inline constexpr char kChatTemplate[] = "tokenizer.chat_template";

// "<arch>.<suffix>".
inline std::string arch_key(std::string_view arch, std::string_view suffix) {
  std::string key(arch);
  key += '.';
  key += suffix;
  return key;
}

}  // namespace tg::model::gguf_keys
