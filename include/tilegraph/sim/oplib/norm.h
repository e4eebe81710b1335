#pragma once
// Row normalisations over the last dimension (C) of a dense slice (Tensor / NTensor), rows being
// every N, H, W position: rmsnorm and layernorm, with an optional per-column weight (gamma) and
// bias (beta), fp32 vectors [C] in the tile's SPM (Tensor layout, shape 1x1x1xC). fp16 and bf16
// compute in f32 in the imm space and round once at the end.
//
//   rmsnorm:   y = x * rsqrt(mean(x^2) + eps) [* gamma]
//   layernorm: y = (x - mean(x)) * rsqrt(mean((x - mean)^2) + eps) [* gamma] [+ beta]
//
// The per-row statistic is broadcast with the rows transposed (row_steps.h): widen, transpose,
// square, reduce, +eps, rsqrt, VuV mul, transpose back, VuV by gamma/beta, narrow.
#include <cstdint>

#include "tilegraph/sim/chip.h"
#include "tilegraph/sim/oplib/op_cost.h"
#include "tilegraph/sim/oplib/tensor_desc.h"

namespace tg::sim::oplib {

struct NormParam {
  float epsilon = 1e-6f;
};

// gamma / beta may be null. Return the cycles of their instructions.
uint64_t op_rmsnorm(Tile& tile, const NormParam& param, const Tsr& in, const Tsr* gamma, const Tsr& imm,
                    const Tsr& out);
uint64_t op_layernorm(Tile& tile, const NormParam& param, const Tsr& in, const Tsr* gamma, const Tsr* beta,
                      const Tsr& imm, const Tsr& out);

// Both need two f32 copies of the slice and two f32 values per row.
uint64_t norm_imm_bytes(const Shape4& slice);
// `affine`: with gamma (and layernorm's beta), each an instruction more over the rows.
OpCost rmsnorm_cost(const ChipConfig& config, Format format, const Shape4& slice, bool affine = true);
OpCost layernorm_cost(const ChipConfig& config, Format format, const Shape4& slice, bool affine = true);

}  // namespace tg::sim::oplib
