#include "tilegraph/model/llama_config.h"

#include <cmath>
#include <string>

#include "printable.h"
#include "tilegraph/core/error.h"
#include "tilegraph/model/gguf_keys.h"

namespace tg::model {

namespace {

// Bounds well past any released llama model; they keep a hostile file from asking for absurd
// allocations (a cache of n_layer * n_ctx rows, n_vocab logits) before a tensor is even read.
constexpr int64_t kMaxEmbd = 1 << 16;
constexpr int64_t kMaxLayers = 1 << 10;
constexpr int64_t kMaxFf = 1 << 18;
constexpr int64_t kMaxVocab = 1 << 22;
constexpr int64_t kMaxHeads = 1 << 10;
constexpr int64_t kMaxCtx = int64_t(1) << 24;

[[noreturn]] void fail(const std::string& why) { throw Error("llama: " + why); }

void check_range(const char* name, int64_t value, int64_t max) {
  if (value < 1 || value > max) {
    fail(std::string(name) + " = " + std::to_string(value) + " is outside 1.." + std::to_string(max));
  }
}

// Reads a key as an integer of any integer type, with the key named in errors.
int64_t int_key(const GgufFile& file, const std::string& key) {
  const GgufValue& v = file.get(key);
  try {
    return v.to_int();
  } catch (const Error&) {
    fail(key + " must be an integer, got " + v.describe());
  }
}

float float_key(const GgufFile& file, const std::string& key, float fallback) {
  const GgufValue* v = file.find(key);
  if (!v) return fallback;
  double value;
  try {
    value = v->to_float();
  } catch (const Error&) {
    fail(key + " must be f32 or f64, got " + v->describe());
  }
  if (!std::isfinite(value) || value <= 0) fail(key + " must be positive and finite, got " + v->describe());
  // An f64 can hold values that f32, which the graph computes with, rounds to 0 or inf.
  if (!std::isnormal(float(value))) fail(key + " = " + v->describe() + " is outside the range of f32");
  return float(value);
}

// RoPE's position scale, as llama.cpp reads it (`prefix`: the architecture's keys, "llama."):
// linear scaling (also what a file without llama.rope.scaling.type means) divides positions by
// llama.rope.scaling.factor (older files: llama.rope.scale_linear; absent or 0: no scaling); type none never scales.
// YaRN and the other schemes change more than the scale, so they are refused.
float rope_freq_scale(const GgufFile& file, const std::string& prefix) {
  std::string type = "linear";
  if (const GgufValue* v = file.find(prefix + gguf_keys::kRopeScalingType)) {
    if (v->type() != GgufType::STRING) fail(prefix + "rope.scaling.type must be a string, got " + v->describe());
    type = v->get<std::string>();
    if (type != "none" && type != "linear") {
      fail(prefix + "rope.scaling.type " + v->describe() + " is not supported (only none and linear)");
    }
  }
  const std::string key = file.find(prefix + gguf_keys::kRopeScalingFactor) ? prefix + gguf_keys::kRopeScalingFactor
                                                                            : prefix + gguf_keys::kRopeScaleLinear;
  const GgufValue* factor = file.find(key);
  if (type == "none" || !factor) return 1.0f;
  double value;
  try {
    value = factor->to_float();
  } catch (const Error&) {
    fail(std::string(key) + " must be f32 or f64, got " + factor->describe());
  }
  if (value == 0) return 1.0f;
  if (!std::isfinite(value) || value < 0)
    fail(std::string(key) + " must be positive and finite, got " + factor->describe());
  if (!std::isnormal(float(1.0 / value)))
    fail(std::string(key) + " = " + factor->describe() + " is outside the range of f32 (as 1 / factor)");
  return float(1.0 / value);
}

}  // namespace

void LlamaConfig::validate() const {
  check_range("n_vocab", n_vocab, kMaxVocab);
  check_range("context length", n_ctx_train, kMaxCtx);
  check_range("n_embd", n_embd, kMaxEmbd);
  check_range("n_layer", n_layer, kMaxLayers);
  check_range("n_ff", n_ff, kMaxFf);
  check_range("n_head", n_head, kMaxHeads);
  check_range("n_head_kv", n_head_kv, kMaxHeads);
  if (n_embd % n_head != 0) {
    fail("n_embd " + std::to_string(n_embd) + " is not a multiple of n_head " + std::to_string(n_head));
  }
  if (n_head % n_head_kv != 0) {
    fail("n_head " + std::to_string(n_head) + " is not a multiple of n_head_kv " + std::to_string(n_head_kv));
  }
  if (head_dim() % 2 != 0) fail("head_dim " + std::to_string(head_dim()) + " must be even for RoPE");
  if (!std::isfinite(rms_eps) || rms_eps <= 0) fail("rms_eps must be positive");
  if (!std::isfinite(rope_base) || rope_base <= 0) fail("rope freq_base must be positive");
  if (!std::isfinite(rope_freq_scale) || rope_freq_scale <= 0) fail("rope freq_scale must be positive");
}

BlockConfig LlamaConfig::block_config(int64_t n_ctx, DType weight_type, DType cache_type) const {
  BlockConfig b;
  b.n_embd = n_embd;
  b.n_head = n_head;
  b.n_head_kv = n_head_kv;
  b.n_ff = n_ff;
  b.n_ctx = n_ctx;
  b.rms_eps = rms_eps;
  b.rope_base = rope_base;
  b.rope_freq_scale = rope_freq_scale;
  b.rope_mode = arch == Architecture::kQwen2 ? RopeMode::NEOX : RopeMode::NORMAL;
  b.qkv_bias = arch == Architecture::kQwen2;
  b.weight_type = weight_type;
  b.cache_type = cache_type;
  return b;
}

std::string_view architecture_name(Architecture arch) { return arch == Architecture::kQwen2 ? "qwen2" : "llama"; }

std::optional<Architecture> architecture_from_name(std::string_view name) {
  for (Architecture arch : {Architecture::kLlama, Architecture::kQwen2}) {
    if (name == architecture_name(arch)) return arch;
  }
  return std::nullopt;
}

LlamaConfig llama_config_from_gguf(const GgufFile& file) {
  const GgufValue* arch = file.find(gguf_keys::kArchitecture);
  if (!arch) fail(file.source() + ": missing general.architecture (not a model file?)");
  if (arch->type() != GgufType::STRING) fail("general.architecture must be a string, got " + arch->describe());
  const std::optional<Architecture> known = architecture_from_name(arch->get<std::string>());
  if (!known) {
    fail(file.source() + ": unsupported architecture " + printable(arch->get<std::string>(), '\'') +
         " (supported: llama, qwen2)");
  }
  LlamaConfig c;
  c.arch = *known;
  const std::string prefix = std::string(architecture_name(c.arch)) + ".";
  c.n_ctx_train = int_key(file, prefix + gguf_keys::kContextLength);
  c.n_embd = int_key(file, prefix + gguf_keys::kEmbeddingLength);
  c.n_layer = int_key(file, prefix + gguf_keys::kBlockCount);
  c.n_ff = int_key(file, prefix + gguf_keys::kFeedForwardLength);
  c.n_head = int_key(file, prefix + gguf_keys::kHeadCount);
  c.n_head_kv =
      file.find(prefix + gguf_keys::kHeadCountKv) ? int_key(file, prefix + gguf_keys::kHeadCountKv) : c.n_head;
  c.rms_eps = float_key(file, prefix + gguf_keys::kLayerNormRmsEpsilon, c.rms_eps);
  c.rope_base = float_key(file, prefix + gguf_keys::kRopeFreqBase, c.rope_base);
  const GgufValue* tokens = file.find(gguf_keys::kTokens);
  if (tokens && !(tokens->is_array() && tokens->element_type() == GgufType::STRING)) {
    fail("tokenizer.ggml.tokens must be an array of strings, got " + tokens->describe());
  }
  if (file.find(prefix + gguf_keys::kVocabSize)) {
    c.n_vocab = int_key(file, prefix + gguf_keys::kVocabSize);
    if (tokens && int64_t(tokens->array_size()) != c.n_vocab) {
      fail(prefix + "vocab_size " + std::to_string(c.n_vocab) + " differs from the " +
           std::to_string(tokens->array_size()) + " tokens of tokenizer.ggml.tokens");
    }
  } else if (tokens) {
    c.n_vocab = int64_t(tokens->array_size());
  } else {
    fail(file.source() + ": neither " + prefix + "vocab_size nor tokenizer.ggml.tokens gives the vocabulary size");
  }
  c.rope_freq_scale = rope_freq_scale(file, prefix);
  c.validate();

  // Variants this builder does not implement: refuse them rather than compute something else.
  if (file.find(prefix + gguf_keys::kRopeDimensionCount)) {
    const int64_t n_rot = int_key(file, prefix + gguf_keys::kRopeDimensionCount);
    if (n_rot != c.head_dim()) {
      fail(prefix + "rope.dimension_count " + std::to_string(n_rot) + " differs from head_dim " +
           std::to_string(c.head_dim()) + ": partial rotary embeddings are not supported");
    }
  }
  for (const std::string& key : {prefix + gguf_keys::kKeyLength, prefix + gguf_keys::kValueLength}) {
    if (file.find(key) && int_key(file, key) != c.head_dim()) {
      fail(key + " " + std::to_string(int_key(file, key)) + " differs from head_dim " + std::to_string(c.head_dim()) +
           " (n_embd / n_head): other head sizes are not supported");
    }
  }
  if (file.find(prefix + gguf_keys::kExpertCount)) {
    const int64_t experts = int_key(file, prefix + gguf_keys::kExpertCount);
    if (experts < 0) fail(prefix + "expert_count = " + std::to_string(experts) + " is negative");
    if (experts > 0) fail("mixture-of-experts models (" + prefix + "expert_count > 0) are not supported");
  }
  return c;
}

LlamaConfig llama_preset(std::string_view name) {
  LlamaConfig c;
  if (name == "tiny") {
    c.n_vocab = 512;
    c.n_ctx_train = 256;
    c.n_embd = 128;
    c.n_layer = 2;
    c.n_ff = 352;
    c.n_head = 4;
    c.n_head_kv = 2;
  } else if (name == "small") {
    c.n_vocab = 2048;
    c.n_ctx_train = 512;
    c.n_embd = 256;
    c.n_layer = 4;
    c.n_ff = 704;
    c.n_head = 8;
    c.n_head_kv = 4;
  } else if (name == "d2048") {  // large enough that decode reads its weights at the memory bound
    c.n_vocab = 8192;
    c.n_ctx_train = 4096;
    c.n_embd = 2048;
    c.n_layer = 8;
    c.n_ff = 5632;
    c.n_head = 16;
    c.n_head_kv = 8;
  } else {
    throw Error("llama: unknown preset '" + std::string(name) + "' (expected tiny, small or d2048)");
  }
  return c;
}

std::vector<std::string> llama_preset_names() { return {"tiny", "small", "d2048"}; }

}  // namespace tg::model
