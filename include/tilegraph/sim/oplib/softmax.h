#pragma once
// Softmax of each row (the last dimension, C) of a dense slice: y = softmax(x * scale + mask),
// the mask optional, fp32 in the tile's SPM with either the slice's rows or one row for all.
// fp16 / bf16 compute in f32 in the imm space and round once. Steps: widen, VS mul scale, VV / VuV
// add mask, then on the transposed rows (row_steps.h) max, subtract, exp, sum, reciprocal,
// multiply, transpose back, narrow.
#include <cstdint>

#include "tilegraph/sim/chip.h"
#include "tilegraph/sim/oplib/op_cost.h"
#include "tilegraph/sim/oplib/tensor_desc.h"

namespace tg::sim::oplib {

struct SoftmaxParam {
  float scale = 1.0f;
};

uint64_t op_softmax(Tile& tile, const SoftmaxParam& param, const Tsr& in, const Tsr* mask, const Tsr& imm,
                    const Tsr& out);
// Two f32 copies of the slice and two f32 values per row.
uint64_t softmax_imm_bytes(const Shape4& slice);
OpCost softmax_cost(const ChipConfig& config, Format format, const Shape4& slice, bool masked);

}  // namespace tg::sim::oplib
