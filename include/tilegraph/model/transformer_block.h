#pragma once
// One llama-style decoder block built with the core API: RMSNorm, Q/K/V projections (with biases
// for qwen2), RoPE, grouped-query attention over a KV cache written with SET_ROWS, output
// projection, RMSNorm and a SwiGLU FFN, each with its residual. The llama builder (llama.h) stacks these; the demo and
// the graph benchmark use them on their own.
#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "tilegraph/core/context.h"
#include "tilegraph/core/ops.h"
#include "tilegraph/core/tensor.h"
#include "tilegraph/model/random_weights.h"

namespace tg::model {

struct BlockConfig {
  int64_t n_embd = 256;
  int64_t n_head = 8;
  int64_t n_head_kv = 4;
  int64_t n_ff = 704;
  int64_t n_ctx = 256;  // KV cache length
  float rms_eps = 1e-5f;
  float rope_base = 10000.0f;
  float rope_freq_scale = 1.0f;           // positions are multiplied by it (linear RoPE scaling)
  RopeMode rope_mode = RopeMode::NORMAL;  // NEOX for qwen2
  bool qkv_bias = false;                  // the Q, K and V projections add biases (qwen2)
  DType weight_type = DType::F32;         // f32, f16, bf16 or quantized (dtype.h)
  // wv's and w_down's type where it is not weight_type: llama.cpp's K-quant mixes (Q4_K_M) keep
  // these two at more bits.
  std::optional<DType> wv_type, w_down_type;
  DType cache_type = DType::F16;  // f32, f16 or bf16

  int64_t head_dim() const { return n_embd / n_head; }
  DType wv_weight_type() const { return wv_type.value_or(weight_type); }
  DType w_down_weight_type() const { return w_down_type.value_or(weight_type); }
  // Throws tg::Error when the sizes do not form a valid block.
  void validate() const;
};

struct BlockWeights {
  Tensor* attn_norm;  // f32 [n_embd]
  Tensor* wq;         // [n_embd, n_embd]
  Tensor* wk;         // [n_embd, n_head_kv * head_dim]
  Tensor* wv;         // [n_embd, n_head_kv * head_dim]
  // f32 biases of the Q, K and V projections ([n_embd], [kv_dim], [kv_dim]) when qkv_bias, else
  // null.
  Tensor* bq = nullptr;
  Tensor* bk = nullptr;
  Tensor* bv = nullptr;
  Tensor* wo;        // [n_embd, n_embd]
  Tensor* ffn_norm;  // f32 [n_embd]
  Tensor* w_gate;    // [n_embd, n_ff]
  Tensor* w_up;      // [n_embd, n_ff]
  Tensor* w_down;    // [n_ff, n_embd]
  // Optional f32 [head_dim / 2]: divides RoPE's per-pair frequencies (llama 3's long-context
  // scaling); every block of a model shares one.
  Tensor* rope_freqs = nullptr;

  // The block's own tensors (not rope_freqs) in llama.cpp's file order, absent biases null.
  std::array<Tensor*, 12> tensors() const {
    return {attn_norm, wq, bq, wk, bk, wv, bv, wo, ffn_norm, w_gate, w_up, w_down};
  }
};

// A block's KV cache: one row of head_dim * n_head_kv per position. Kept apart from the weights
// because a model's weights are shared while each decode session has its own cache.
struct KvCache {
  Tensor* k;  // [head_dim * n_head_kv, n_ctx] of cache_type
  Tensor* v;  // [head_dim * n_head_kv, n_ctx] of cache_type
};

// Weights (allocated in `ctx`, which must allocate) filled with deterministic pseudo-random
// values scaled like a trained model's (1/sqrt(fan_in)).
BlockWeights make_block_weights(Context& ctx, const BlockConfig& config, uint64_t seed);
// make_block_weights' tensors without their contents (`ctx` may be no-alloc): each is appended to
// `generated` with the contents make_block_weights would give it.
BlockWeights declare_block_weights(Context& ctx, const BlockConfig& config, uint64_t seed,
                                   std::vector<GeneratedTensor>& generated);
// A cache of n_ctx rows in `ctx`: zeroed if `ctx` allocates; in a no_alloc context the tensors
// have no data yet, for the caller to place in a backend's buffer and clear (LlamaSession).
KvCache make_kv_cache(Context& ctx, const BlockConfig& config);

// The per-step inputs of a block, created in the graph context and marked kFlagInput.
struct StepInputs {
  Tensor* x;        // f32 [n_embd, n_tokens]: the residual stream in
  Tensor* pos;      // i32 [n_tokens]: positions of the new tokens
  Tensor* kv_rows;  // i32 [n_tokens]: cache rows the new tokens are written to
  Tensor* mask;     // f32 [n_kv, n_tokens]: 0 where a query may attend, -inf elsewhere
};
StepInputs make_step_inputs(Context& ctx, const BlockConfig& config, int64_t n_tokens, int64_t n_kv);
// Fills the inputs for tokens at positions [n_past, n_past + n_tokens) with causal masking and
// cache rows equal to positions; x is left to the caller. Writes through tensor_set, so the
// inputs may live in a device buffer.
void fill_step_inputs(const StepInputs& inputs, int64_t n_past);

// The block's output f32 [n_embd, n_tokens]. This step's K and V are written to the cache rows
// in inputs.kv_rows; attention reads cache rows [0, n_kv), which must include them.
Tensor* build_block(Context& ctx, const BlockConfig& config, const BlockWeights& weights, const KvCache& cache,
                    const StepInputs& inputs, int64_t n_kv);

}  // namespace tg::model
