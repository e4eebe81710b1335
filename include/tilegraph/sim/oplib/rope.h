#pragma once
// Rotary position embedding of a dense slice x: 1 x tokens x heads x head_dim (ggml's rope_ext:
// NORMAL rotates pairs (x[2i], x[2i+1]), NEOX pairs (x[i], x[i + n_dims/2]); dims past n_dims are
// copied). The angles come as cos / sin tables, f32 tokens x n_dims/2, which the program computes
// for its positions with rope_tables (the core's YaRN formula, in double) and loads like any
// constant: the CGRA has no sin/cos.
//
// Steps: widen x to f32 in imm; op_gatherScatter the pairs' first and second elements apart; per
// token VuV x0*cos, x1*sin, x0*sin, x1*cos (the token's table row broadcast over its heads); VV
// sub and add; op_gatherScatter them back into place; narrow to out.
#include <cstdint>
#include <vector>

#include "tilegraph/core/rope.h"
#include "tilegraph/sim/chip.h"
#include "tilegraph/sim/oplib/op_cost.h"
#include "tilegraph/sim/oplib/tensor_desc.h"

namespace tg::sim::oplib {

struct RopeParam {
  int64_t n_dims = 0;  // even, <= head_dim
  bool neox = false;
};

uint64_t op_rope(Tile& tile, const RopeParam& param, const Tsr& x, const Tsr& cos, const Tsr& sin, const Tsr& imm,
                 const Tsr& out);
uint64_t rope_imm_bytes(const RopeParam& param, const Shape4& slice);
OpCost rope_cost(const ChipConfig& config, const RopeParam& param, Format format, const Shape4& slice);

struct RopeTables {
  std::vector<float> cos, sin;  // [tokens][n_dims / 2]
};
// freq_factors (empty, or one per pair) divide the pairs' frequencies, as ROPE's optional operand.
RopeTables rope_tables(const RopeYarn& yarn, const std::vector<int32_t>& positions,
                       const std::vector<float>& freq_factors = {});

}  // namespace tg::sim::oplib
