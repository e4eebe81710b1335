#include "tilegraph/sim/oplib/pool.h"

#include <limits>

#include "oplib/engine_order.h"
#include "oplib/op_checks.h"
#include "tilegraph/sim/lsu.h"

namespace tg::sim::oplib {

namespace {

constexpr const char* kOp = "op_pool2d";

bool symmetric(const Pool2dParam& p) { return p.pad_top == p.pad_bottom && p.pad_left == p.pad_right; }

Shape4 padded_shape(const Pool2dParam& p, const Shape4& in) {
  return Shape4{in.n, in.h + p.pad_top + p.pad_bottom, in.w + p.pad_left + p.pad_right, in.c};
}

}  // namespace

Shape4 pool2d_out_shape(const Pool2dParam& p, const Shape4& in) {
  const Shape4 padded = padded_shape(p, in);
  return Shape4{in.n, (padded.h - p.kh) / p.stride_h + 1, (padded.w - p.kw) / p.stride_w + 1, in.c};
}

uint64_t pool2d_imm_bytes(const Pool2dParam& p, Format format, const Shape4& in) {
  if (symmetric(p)) return 0;
  return uint64_t(padded_shape(p, in).elements()) * format_bytes(format);
}

uint64_t op_pool2d(Tile& tile, const Pool2dParam& p, const Tsr& in, const Tsr& imm, const Tsr& out) {
  using detail::require;
  detail::require_format(kOp, "in", in, {Format::FP32, Format::FP16, Format::BF16});
  require(out.format == in.format, kOp, "out must have in's format");
  detail::require_layout(kOp, "in", in, {MemLayout::Tensor, MemLayout::NTensor});
  detail::require_layout(kOp, "out", out, {MemLayout::Tensor, MemLayout::NTensor});
  require(p.kh > 0 && p.kw > 0 && p.stride_h > 0 && p.stride_w > 0, kOp, "window and stride must be positive");
  require(p.pad_top >= 0 && p.pad_bottom >= 0 && p.pad_left >= 0 && p.pad_right >= 0 && p.pad_top < p.kh &&
              p.pad_bottom < p.kh && p.pad_left < p.kw && p.pad_right < p.kw,
          kOp, "padding must be >= 0 and smaller than the window (a window of padding alone has no value)");
  const Shape4 x = in.shape.real(), padded = padded_shape(p, x);
  require(padded.h >= p.kh && padded.w >= p.kw, kOp,
          "the window " + std::to_string(p.kh) + "x" + std::to_string(p.kw) + " is larger than the padded slice " +
              shape_string(padded));
  const Shape4 o = pool2d_out_shape(p, x);
  require(o == out.shape.real(), kOp,
          "out is " + dims_string(out.shape.shape_real) + ", the pooling gives " + shape_string(o));
  if (x.elements() == 0) return 0;
  cgra::PoolTensor pool{p.op, in.format, in.addr, out.addr,   x.n,        x.h,       x.w,
                        x.c,  p.kh,      p.kw,    p.stride_h, p.stride_w, p.pad_top, p.pad_left};
  detail::after_transfers(tile);
  if (symmetric(p)) return execute(tile, pool);

  detail::require_imm(kOp, imm, pool2d_imm_bytes(p, in.format, x));
  const uint64_t e = format_bytes(in.format), row = uint64_t(x.w * x.c) * e;
  const uint64_t padded_row = uint64_t(padded.w * x.c) * e;
  uint64_t cycles = 0;
  // The padding value: never the maximum, zero in a sum.
  const double fill = p.op == cgra::PoolOp::Max ? -std::numeric_limits<double>::infinity() : 0.0;
  cycles += execute(tile, cgra::FillV{in.format, imm.addr, fill, padded.elements()});
  detail::order(tile, {Engine::CT}, Engine::TDMA);
  for (int64_t b = 0; b < x.n; ++b) {
    const uint64_t src = in.addr + uint64_t(b * x.h) * row;
    const uint64_t dst = imm.addr + uint64_t(b * padded.h + p.pad_top) * padded_row + uint64_t(p.pad_left * x.c) * e;
    cycles += execute(tile, lsu::GatherScatter{src, dst, row, x.h, int64_t(row), int64_t(padded_row)});
  }
  detail::order(tile, {Engine::TDMA}, Engine::CT);
  pool.src = imm.addr;
  pool.h = padded.h;
  pool.w = padded.w;
  pool.pad_h = pool.pad_w = 0;
  return cycles + execute(tile, pool);
}

OpCost pool2d_cost(const ChipConfig& config, const Pool2dParam& param, Format format, const Shape4& in) {
  const uint64_t imm_bytes = pool2d_imm_bytes(param, format, in);
  return cost_only_run(config, imm_bytes, [&](Tile& tile, SpmArena& arena) {
    const MemLayout layout = in.n == 1 ? MemLayout::Tensor : MemLayout::NTensor;
    const Tsr x = arena.tensor(format, layout, in);
    const Tsr out = arena.tensor(format, layout, pool2d_out_shape(param, in));
    return op_pool2d(tile, param, x, imm_tsr(arena.allocate(imm_bytes), imm_bytes), out);
  });
}

}  // namespace tg::sim::oplib
