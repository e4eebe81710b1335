#pragma once
// The weights of a llama-family model under GGUF's standard tensor names:
//   token_embd.weight        [n_embd, n_vocab]
//   blk.N.attn_norm.weight   [n_embd]            f32
//   blk.N.attn_q.weight      [n_embd, n_embd]
//   blk.N.attn_k.weight      [n_embd, n_head_kv * head_dim]   (attn_v likewise)
//   blk.N.attn_output.weight [n_embd, n_embd]
//   blk.N.ffn_norm.weight    [n_embd]            f32
//   blk.N.ffn_gate.weight    [n_embd, n_ff]      (ffn_up likewise)
//   blk.N.ffn_down.weight    [n_ff, n_embd]
//   output_norm.weight       [n_embd]            f32
//   output.weight            [n_embd, n_vocab]   (absent: tied to token_embd)
//   rope_freqs.weight        [head_dim / 2]      f32, optional: RoPE frequency factors (llama 3)
// Matrices may be f32, f16, bf16 or quantized: q8_0, q4_0, q4_1, q5_0, q5_1, q4_K, q5_K, q6_K
// (each its own type, as llama.cpp's files mix them: Q4_K_M files hold q4_K and q6_K matrices).
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tilegraph/core/context.h"
#include "tilegraph/core/tensor.h"
#include "tilegraph/model/gguf.h"
#include "tilegraph/model/llama_config.h"
#include "tilegraph/model/random_weights.h"
#include "tilegraph/model/transformer_block.h"
#include "tilegraph/runtime/backend.h"

namespace tg::model {

class Vocab;

// The types of a generated model's matrices (norms are f32): `matrices` except where named.
struct WeightTypes {
  DType matrices = DType::F32;
  DType attn_v = DType::F32, ffn_down = DType::F32, output = DType::F32;

  static WeightTypes all(DType type) { return {type, type, type, type}; }
  // llama.cpp's Q4_K_M, simplified: q6_K for attn_v, ffn_down and the output head (llama.cpp
  // promotes attn_v and ffn_down in some layers only), q4_K for every other matrix.
  static WeightTypes q4_k_m() { return {DType::Q4_K, DType::Q6_K, DType::Q6_K, DType::Q6_K}; }
  bool uniform() const { return attn_v == matrices && ffn_down == matrices && output == matrices; }
};

class LlamaModel {
 public:
  // Tensors over the file's mapped data (no copy): `file` must outlive the model. Every tensor
  // is checked for presence, shape and type; the first problem throws tg::Error naming it.
  static LlamaModel from_gguf(const GgufFile& file);
  // Deterministic pseudo-random weights (1/sqrt(fan_in) scale, norm gains near 1): matrices of
  // the given types, norms f32, an untied output head. The same config, types and seed give the
  // same model everywhere; f32 and quantized models of one seed hold the same values up to
  // quantization. A matrix whose rows cannot be whole blocks of its type throws tg::Error naming
  // it.
  static LlamaModel generate(const LlamaConfig& config, const WeightTypes& types, uint64_t seed);
  static LlamaModel generate(const LlamaConfig& config, DType weight_type, uint64_t seed) {
    return generate(config, WeightTypes::all(weight_type), seed);
  }
  // generate(config, types, seed).to_gguf(name, vocab) without the model in memory: the writer
  // generates each tensor a row at a time as it writes it, so the file (the same bytes) may be
  // larger than memory.
  static GgufWriter generate_gguf(const LlamaConfig& config, const WeightTypes& types, uint64_t seed,
                                  const std::string& name, const Vocab& vocab);

  LlamaModel(LlamaModel&&) noexcept;
  LlamaModel& operator=(LlamaModel&&) noexcept;
  ~LlamaModel();

  const LlamaConfig& config() const { return config_; }
  Tensor* token_embd() const { return token_embd_; }
  Tensor* output_norm() const { return output_norm_; }
  Tensor* output() const { return output_; }  // == token_embd() when tied
  bool tied_output() const { return output_ == token_embd_; }
  const std::vector<BlockWeights>& layers() const { return layers_; }
  Tensor* rope_freqs() const { return layers_.front().rope_freqs; }  // nullptr: none
  // The type of the attention matrices (the model's nominal weight type).
  DType weight_type() const { return layers_.front().wq->type; }
  // The matrices' distinct types (embedding, head, blocks): weight_type() first, then in the
  // order they first appear. More than one for a mix such as Q4_K_M's.
  std::vector<DType> matrix_types() const;
  // Whether every matrix has weight_type().
  bool uniform_weights() const { return matrix_types().size() == 1; }
  // Weight bytes one decode step reads: every block, the final norm, the whole output head and
  // one embedding row (the bandwidth bound of decoding).
  size_t decode_weight_bytes() const;

  // Puts the weights where `backend` computes (ggml_backend_alloc_ctx_tensors + tensor_set):
  // for a backend with host buffers and every type one it runs, nothing moves (the tensors stay
  // on the file's mapping or the generated data). Otherwise the weights are copied into one
  // buffer of the backend (Buffer::set), those of a type the backend does not run converted to
  // Backend::weight_type first, and the tensors point into it. With `prepare`, the backend then
  // keeps its own copy of each matrix it reads faster in a layout of its own
  // (Backend::prepare_weight; the CPU backend: every quantized matrix), for as long as the model lives:
  // more memory, faster decode (llama.cpp's weight repacking; its --no-repack is prepare = false).
  // Returns the conversions made, one per distinct pair of types (for the caller to report).
  struct Conversion {
    DType from, to;
    size_t tensors = 0;
  };
  std::vector<Conversion> place_weights(Backend& backend, bool prepare = true);
  // The bytes of the backends' prepared copies (place_weights).
  size_t prepared_bytes() const;

  // A GGUF writer holding this model: general.* and llama.* metadata, `vocab`'s tokenizer keys
  // (it must have n_vocab tokens) and every tensor under its standard name. The writer points
  // into this model's tensors. Without a vocabulary: Vocab::minimal_sentencepiece(n_vocab).
  GgufWriter to_gguf(const std::string& name) const;
  GgufWriter to_gguf(const std::string& name, const Vocab& vocab) const;

 private:
  LlamaModel();
  // generate()'s model, its tensors unfilled (headers only unless `allocate`): each is appended to
  // `generated` with its contents.
  static LlamaModel declare_generated(const LlamaConfig& config, const WeightTypes& types, uint64_t seed, bool allocate,
                                      std::vector<GeneratedTensor>& generated);
  // The writer of to_gguf, each tensor given to it by add(writer, tensor).
  GgufWriter gguf_writer(const std::string& name, const Vocab& vocab,
                         const std::function<void(GgufWriter&, const Tensor&)>& add) const;

  LlamaConfig config_;
  std::unique_ptr<Context> ctx_;  // tensor headers, and their data for generated models
  Tensor* token_embd_ = nullptr;
  Tensor* output_norm_ = nullptr;
  Tensor* output_ = nullptr;
  std::vector<BlockWeights> layers_;
  std::unique_ptr<Buffer> weights_buffer_;  // the weights in a backend's memory (place_weights)
  // Backends' copies of weights (place_weights); released before the weights they copy.
  std::vector<std::unique_ptr<PreparedWeight>> prepared_;
};

}  // namespace tg::model
