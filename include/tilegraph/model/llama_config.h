#pragma once
// The hyper-parameters of a llama-family model, as GGUF stores them under `<architecture>.*`,
// and the named presets `tilegraph run` and `tilegraph gguf-gen` use for generated models.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tilegraph/core/dtype.h"
#include "tilegraph/model/gguf.h"
#include "tilegraph/model/transformer_block.h"

namespace tg::model {

// The architectures the builder runs (general.architecture). qwen2 is llama's block with biases
// on the Q, K and V projections and NEOX-style RoPE (rotating x[i] with x[i + head_dim / 2]), as
// llama.cpp builds it.
enum class Architecture { kLlama, kQwen2 };
std::string_view architecture_name(Architecture arch);  // "llama", "qwen2"
// The architecture named `name`, if the builder runs it.
std::optional<Architecture> architecture_from_name(std::string_view name);

struct LlamaConfig {
  Architecture arch = Architecture::kLlama;
  int64_t n_vocab = 0;
  int64_t n_ctx_train = 0;       // llama.context_length: positions the model was trained for
  int64_t n_embd = 0;            // llama.embedding_length
  int64_t n_layer = 0;           // llama.block_count
  int64_t n_ff = 0;              // llama.feed_forward_length
  int64_t n_head = 0;            // llama.attention.head_count
  int64_t n_head_kv = 0;         // llama.attention.head_count_kv (defaults to n_head)
  float rms_eps = 1e-5f;         // llama.attention.layer_norm_rms_epsilon
  float rope_base = 10000.0f;    // llama.rope.freq_base
  float rope_freq_scale = 1.0f;  // 1 / llama.rope.scaling.factor (linear RoPE scaling)

  int64_t head_dim() const { return n_head > 0 ? n_embd / n_head : 0; }
  // Throws tg::Error ("llama: ...") naming the first value out of range or inconsistent.
  void validate() const;
  // The per-block configuration for a session with `n_ctx` cache rows, every matrix of
  // `weight_type` (set wv_type / w_down_type for mixes, then validate it).
  BlockConfig block_config(int64_t n_ctx, DType weight_type, DType cache_type) const;
};

// Reads the config from `general.architecture` ("llama" or "qwen2") and that architecture's keys
// (llama.context_length or qwen2.context_length, ...). The vocabulary
// size comes from llama.vocab_size, else from the tokenizer's token list; token_embd.weight is
// checked against it when the model is loaded. Missing, mistyped or contradicting keys and
// unsupported variants (partial rotary dimensions, head sizes other than n_embd / n_head, RoPE
// scaling other than linear, mixture of experts) throw tg::Error naming the key.
LlamaConfig llama_config_from_gguf(const GgufFile& file);

// "tiny" (d_model 128, 2 layers) and "small" (d_model 256, 4 layers); unknown names throw.
LlamaConfig llama_preset(std::string_view name);
std::vector<std::string> llama_preset_names();

}  // namespace tg::model
