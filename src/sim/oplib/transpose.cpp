#include "oplib/engine_order.h"
#include "oplib/op_checks.h"
#include "tilegraph/sim/cgra.h"
#include "tilegraph/sim/oplib/data_layout_ops.h"

namespace tg::sim::oplib {

uint64_t op_transpose(Tile& tile, const Tsr& in, const Tsr& out) {
  constexpr const char* kOp = "op_transpose";
  detail::require_layout(kOp, "in", in, {MemLayout::Tensor, MemLayout::NTensor});
  detail::require_layout(kOp, "out", out, {MemLayout::Tensor, MemLayout::NTensor});
  detail::require(out.format == in.format, kOp, "out must have in's format");
  const Shape4 s = in.shape.real();
  detail::require(s.h == 1, kOp, "in " + dims_string(in.shape.shape_real) + " is not N x 1 x rows x columns");
  detail::require(out.shape.real() == Shape4{s.n, 1, s.c, s.w}, kOp,
                  "out is " + dims_string(out.shape.shape_real) + ", expected " + shape_string({s.n, 1, s.c, s.w}));
  const uint64_t bytes = uint64_t(s.w * s.c) * format_bytes(in.format);
  uint64_t cycles = 0;
  detail::after_transfers(tile);
  for (int64_t b = 0; b < s.n; ++b) {
    cycles += execute(tile, cgra::TransposeTensor{in.format, in.addr + uint64_t(b) * bytes,
                                                  out.addr + uint64_t(b) * bytes, s.w, s.c});
  }
  return cycles;
}

OpCost transpose_cost(const ChipConfig& config, Format format, const Shape4& slice) {
  return cost_only_run(config, 0, [&](Tile& tile, SpmArena& arena) {
    const MemLayout layout = slice.n == 1 ? MemLayout::Tensor : MemLayout::NTensor;
    const Tsr in = arena.tensor(format, layout, slice);
    const Tsr out = arena.tensor(format, layout, {slice.n, 1, slice.c, slice.w});
    return op_transpose(tile, in, out);
  });
}

}  // namespace tg::sim::oplib
