#include "tilegraph/model/transformer_block.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "tilegraph/core/error.h"
#include "tilegraph/core/ops.h"
#include "tilegraph/model/random_weights.h"
#include "tilegraph/runtime/tensor_data.h"

namespace tg::model {

void BlockConfig::validate() const {
  auto fail = [](const std::string& why) { throw Error("transformer block: " + why); };
  if (n_embd <= 0 || n_head <= 0 || n_head_kv <= 0 || n_ff <= 0 || n_ctx <= 0) {
    fail("all sizes must be positive");
  }
  if (n_embd % n_head != 0) fail("n_embd must be a multiple of n_head");
  if (n_head % n_head_kv != 0) fail("n_head must be a multiple of n_head_kv");
  if (head_dim() % 2 != 0) fail("head_dim must be even for RoPE");
  // A matrix row is whole blocks: w_down's rows are n_ff long, every other matrix's n_embd.
  struct Rows {
    const char* matrix;
    DType type;
    const char* size;
    int64_t ne0;
  };
  for (const Rows& r : {Rows{"wq", weight_type, "n_embd", n_embd}, Rows{"wv", wv_weight_type(), "n_embd", n_embd},
                        Rows{"w_down", w_down_weight_type(), "n_ff", n_ff}}) {
    if (r.type == DType::I32) fail("weights cannot be i32");
    const int64_t block = int64_t(dtype_traits(r.type).block_size);
    if (r.ne0 % block == 0) continue;
    fail(std::string(r.matrix) + " is " + std::string(dtype_name(r.type)) + ": its rows of " + r.size + " = " +
         std::to_string(r.ne0) + " are not whole " + std::to_string(block) + "-element blocks");
  }
  if (!dtype_traits(cache_type).is_float) fail("the KV cache must be f32, f16 or bf16");
}

BlockWeights declare_block_weights(Context& ctx, const BlockConfig& c, uint64_t seed,
                                   std::vector<GeneratedTensor>& generated) {
  c.validate();
  const int64_t kv_dim = c.head_dim() * c.n_head_kv;
  uint64_t next_seed = seed;
  auto tensor = [&](const char* name, DType type, std::initializer_list<int64_t> ne, float scale, float offset = 0.0f) {
    Tensor* t = ctx.new_tensor(type, ne);
    t->set_name(name);
    t->flags |= kFlagParam;
    generated.push_back({t, {next_seed++, scale, offset}});
    return t;
  };
  auto matrix = [&](const char* name, int64_t in, int64_t out, DType type) {
    return tensor(name, type, {in, out}, 1.0f / std::sqrt(float(in)));
  };
  // Near 1, like trained norm gains.
  auto norm_weight = [&](const char* name) { return tensor(name, DType::F32, {c.n_embd}, 0.1f, 1.0f); };
  auto bias = [&](const char* name, int64_t n) { return tensor(name, DType::F32, {n}, 0.5f); };
  BlockWeights w;
  w.attn_norm = norm_weight("attn_norm");
  w.wq = matrix("wq", c.n_embd, c.n_embd, c.weight_type);
  w.wk = matrix("wk", c.n_embd, kv_dim, c.weight_type);
  w.wv = matrix("wv", c.n_embd, kv_dim, c.wv_weight_type());
  if (c.qkv_bias) {
    w.bq = bias("bq", c.n_embd);
    w.bk = bias("bk", kv_dim);
    w.bv = bias("bv", kv_dim);
  }
  w.wo = matrix("wo", c.n_embd, c.n_embd, c.weight_type);
  w.ffn_norm = norm_weight("ffn_norm");
  w.w_gate = matrix("w_gate", c.n_embd, c.n_ff, c.weight_type);
  w.w_up = matrix("w_up", c.n_embd, c.n_ff, c.weight_type);
  w.w_down = matrix("w_down", c.n_ff, c.n_embd, c.w_down_weight_type());
  return w;
}

BlockWeights make_block_weights(Context& ctx, const BlockConfig& c, uint64_t seed) {
  if (ctx.no_alloc()) throw Error("make_block_weights: the context must allocate");
  std::vector<GeneratedTensor> generated;
  const BlockWeights w = declare_block_weights(ctx, c, seed, generated);
  for (const GeneratedTensor& g : generated) g.contents.fill(*g.tensor);
  return w;
}

KvCache make_kv_cache(Context& ctx, const BlockConfig& c) {
  c.validate();
  auto cache = [&](const char* name) {
    Tensor* t = ctx.new_tensor(c.cache_type, {c.head_dim() * c.n_head_kv, c.n_ctx});
    t->set_name(name);
    if (t->data) std::memset(t->data, 0, t->nbytes());
    return t;
  };
  KvCache kv;
  kv.k = cache("k_cache");
  kv.v = cache("v_cache");
  return kv;
}

StepInputs make_step_inputs(Context& ctx, const BlockConfig& c, int64_t n_tokens, int64_t n_kv) {
  if (n_tokens <= 0 || n_kv < n_tokens || n_kv > c.n_ctx) {
    throw Error("transformer block: need 0 < n_tokens <= n_kv <= n_ctx (n_tokens=" + std::to_string(n_tokens) +
                ", n_kv=" + std::to_string(n_kv) + ", n_ctx=" + std::to_string(c.n_ctx) + ")");
  }
  StepInputs in;
  in.x = ctx.new_tensor(DType::F32, {c.n_embd, n_tokens});
  in.pos = ctx.new_tensor(DType::I32, {n_tokens});
  in.kv_rows = ctx.new_tensor(DType::I32, {n_tokens});
  in.mask = ctx.new_tensor(DType::F32, {n_kv, n_tokens});
  const char* names[] = {"x", "pos", "kv_rows", "mask"};
  Tensor* tensors[] = {in.x, in.pos, in.kv_rows, in.mask};
  for (int i = 0; i < 4; ++i) {
    tensors[i]->set_name(names[i]);
    tensors[i]->flags |= kFlagInput;
  }
  return in;
}

void fill_step_inputs(const StepInputs& in, int64_t n_past) {
  const int64_t n_tokens = in.pos->ne[0];
  const int64_t n_kv = in.mask->ne[0];
  std::vector<int32_t> pos(static_cast<size_t>(n_tokens));
  std::vector<float> mask(static_cast<size_t>(n_tokens * n_kv));
  for (int64_t t = 0; t < n_tokens; ++t) {
    pos[size_t(t)] = int32_t(n_past + t);
    for (int64_t j = 0; j < n_kv; ++j) {
      mask[size_t(t * n_kv + j)] = j <= n_past + t ? 0.0f : -std::numeric_limits<float>::infinity();
    }
  }
  // Cache rows equal positions.
  tensor_set(*in.pos, pos.data(), 0, pos.size() * sizeof(int32_t));
  tensor_set(*in.kv_rows, pos.data(), 0, pos.size() * sizeof(int32_t));
  tensor_set(*in.mask, mask.data(), 0, mask.size() * sizeof(float));
}

Tensor* build_block(Context& ctx, const BlockConfig& c, const BlockWeights& w, const KvCache& cache,
                    const StepInputs& in, int64_t n_kv) {
  const int64_t n_tokens = in.x->ne[1];
  const int64_t head_dim = c.head_dim();
  const int64_t kv_dim = head_dim * c.n_head_kv;

  // Attention.
  Tensor* h = mul(ctx, rms_norm(ctx, in.x, c.rms_eps), w.attn_norm);
  auto project = [&](Tensor* weight, Tensor* bias) {
    Tensor* y = mul_mat(ctx, weight, h);
    return bias ? add(ctx, y, bias) : y;
  };
  Tensor* q = reshape(ctx, project(w.wq, w.bq), {head_dim, c.n_head, n_tokens});
  Tensor* k = reshape(ctx, project(w.wk, w.bk), {head_dim, c.n_head_kv, n_tokens});
  Tensor* v = project(w.wv, w.bv);
  RopeParams rope_params;
  rope_params.mode = c.rope_mode;
  rope_params.n_dims = int32_t(head_dim);
  rope_params.freq_base = c.rope_base;
  rope_params.freq_scale = c.rope_freq_scale;
  q = rope(ctx, q, in.pos, rope_params, w.rope_freqs);
  k = rope(ctx, k, in.pos, rope_params, w.rope_freqs);

  // Write this step's K and V into the caches, then attend over the first n_kv rows. The views
  // are taken of the SET_ROWS results so that attention is ordered after the writes.
  Tensor* k_written = set_rows(ctx, cache.k, reshape(ctx, k, {kv_dim, n_tokens}), in.kv_rows);
  Tensor* v_written = set_rows(ctx, cache.v, v, in.kv_rows);
  const size_t cache_row = cache.k->nb[1];
  const size_t head_bytes = row_size(cache.k->type, head_dim);
  Tensor* k_all = view_3d(ctx, k_written, head_dim, n_kv, c.n_head_kv, cache_row, head_bytes, 0);
  Tensor* v_all = view_3d(ctx, v_written, head_dim, n_kv, c.n_head_kv, cache_row, head_bytes, 0);
  Tensor* q_heads = permute(ctx, q, 0, 2, 1, 3);  // [head_dim, n_tokens, n_head]
  Tensor* attn = flash_attn_ext(ctx, q_heads, k_all, v_all, in.mask, 1.0f / std::sqrt(float(head_dim)));
  attn = reshape(ctx, attn, {c.n_embd, n_tokens});
  Tensor* x = add(ctx, in.x, mul_mat(ctx, w.wo, attn));

  // SwiGLU feed-forward.
  h = mul(ctx, rms_norm(ctx, x, c.rms_eps), w.ffn_norm);
  Tensor* gated = swiglu(ctx, mul_mat(ctx, w.w_gate, h), mul_mat(ctx, w.w_up, h));
  return add(ctx, x, mul_mat(ctx, w.w_down, gated));
}

}  // namespace tg::model
