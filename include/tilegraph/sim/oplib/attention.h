#pragma once
// Attention for one decode step: the query of one token against a slice of the K/V cache,
// grouped-query (H query heads share Hkv cache heads, H % Hkv == 0).
//
//   q: 1 x 1 x H x D, k and v: 1 x n_kv x Hkv x D (dense, fp16 / bf16 / fp32, one format),
//   mask (optional): fp32 1 x 1 x 1 x n_kv added to every head's scores,
//   out: 1 x 1 x H x D (fp32 or the cache's format).
//   out[h] = softmax(q[h] . K[g]^T * scale + mask) . V[g], g = h / (H / Hkv)
//
// Per cache head g: op_gatherScatter K[g] and V[g] out of the interleaved cache rows (when
// Hkv > 1); NE GEMM of the group's G = H/Hkv query rows against K[g] (transposed operand), the
// scale applied by the NE's post-processing, f32 scores; the softmax of the G rows on the CGRA
// (row_steps.h); the probabilities converted to the cache's format; NE GEMM by V[g] into out.
#include <cstdint>

#include "tilegraph/sim/chip.h"
#include "tilegraph/sim/oplib/op_cost.h"
#include "tilegraph/sim/oplib/tensor_desc.h"

namespace tg::sim::oplib {

struct AttentionParam {
  float scale = 1.0f;
};

uint64_t op_attention_decode(Tile& tile, const AttentionParam& param, const Tsr& q, const Tsr& k, const Tsr& v,
                             const Tsr* mask, const Tsr& imm, const Tsr& out);
uint64_t attention_decode_imm_bytes(Format format, int64_t heads, int64_t kv_heads, int64_t n_kv, int64_t head_dim);
OpCost attention_decode_cost(const ChipConfig& config, Format format, int64_t heads, int64_t kv_heads, int64_t n_kv,
                             int64_t head_dim);

}  // namespace tg::sim::oplib
