#pragma once
// Element-wise ops on a slice, one CGRA instruction over the whole buffer (in any layout; the
// padding of a Cx / NCx result is computed too and holds no meaning): binary add / sub / mul /
// div of two slices of one shape, or of a slice and one row broadcast over it (dense layouts);
// scale (x * s + bias, in f32 with one rounding); activations (relu, gelu, silu, sigmoid, tanh,
// exp, ...). Formats fp32, fp16, bf16: the CGRA computes in f32 and rounds each result once.
#include <cstdint>

#include "tilegraph/sim/cgra.h"
#include "tilegraph/sim/chip.h"
#include "tilegraph/sim/oplib/op_cost.h"
#include "tilegraph/sim/oplib/tensor_desc.h"

namespace tg::sim::oplib {

// out = a op b; b has a's shape and layout, or is one dense row of a's C broadcast over dense a.
uint64_t op_binary(Tile& tile, cgra::ArithOp op, const Tsr& a, const Tsr& b, const Tsr& out);
// out = f(in).
uint64_t op_activation(Tile& tile, cgra::UnaryOp op, const Tsr& in, const Tsr& out);
// out = in * s + bias. fp16 / bf16 go through f32 in imm (scale_imm_bytes) so they round once.
uint64_t op_scale(Tile& tile, float s, float bias, const Tsr& in, const Tsr& imm, const Tsr& out);
uint64_t scale_imm_bytes(Format format, MemLayout layout, const Shape4& slice);

OpCost binary_cost(const ChipConfig& config, cgra::ArithOp op, Format format, MemLayout layout, const Shape4& slice);
OpCost activation_cost(const ChipConfig& config, cgra::UnaryOp op, Format format, MemLayout layout,
                       const Shape4& slice);
OpCost scale_cost(const ChipConfig& config, Format format, MemLayout layout, const Shape4& slice);

}  // namespace tg::sim::oplib
