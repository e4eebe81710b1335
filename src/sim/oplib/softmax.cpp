#include "tilegraph/sim/oplib/softmax.h"

#include "oplib/engine_order.h"
#include "oplib/op_checks.h"
#include "oplib/row_steps.h"

namespace tg::sim::oplib {

namespace {
constexpr const char* kOp = "op_softmax";
}

uint64_t softmax_imm_bytes(const Shape4& s) {
  const uint64_t rows = uint64_t(s.n * s.h * s.w);
  return 2 * rows * uint64_t(s.c) * 4 + 2 * rows * 4;
}

uint64_t op_softmax(Tile& tile, const SoftmaxParam& param, const Tsr& in, const Tsr* mask, const Tsr& imm,
                    const Tsr& out) {
  using cgra::ArithOp;
  using detail::require;
  detail::require_format(kOp, "in", in, {Format::FP32, Format::FP16, Format::BF16});
  detail::require_layout(kOp, "in", in, {MemLayout::Tensor, MemLayout::NTensor});
  detail::require_layout(kOp, "out", out, {MemLayout::Tensor, MemLayout::NTensor});
  require(out.format == in.format, kOp, "out must have in's format");
  detail::require_same_shape(kOp, "in", in, "out", out);
  const Shape4 s = in.shape.real();
  const int64_t r = s.n * s.h * s.w, d = s.c, n = r * d;
  if (mask) {
    detail::require_format(kOp, "mask", *mask, {Format::FP32});
    const int64_t m = mask->shape.real().elements();
    require(m == n || m == d, kOp,
            "mask has " + std::to_string(m) + " elements, expected a row of " + std::to_string(d) + " or the slice's " +
                std::to_string(n));
  }
  if (n == 0) return 0;
  detail::require_imm(kOp, imm, softmax_imm_bytes(s));
  const uint64_t a = imm.addr, t = a + uint64_t(n) * 4, max = t + uint64_t(n) * 4, sum = max + uint64_t(r) * 4;
  detail::after_transfers(tile);
  uint64_t cycles = detail::widen(tile, in.format, in.addr, a, n);
  if (param.scale != 1.0f) cycles += execute(tile, cgra::ArithVS{ArithOp::Mul, Format::FP32, a, param.scale, a, n});
  if (mask && mask->shape.real().elements() == n) {
    cycles += execute(tile, cgra::ArithVV{ArithOp::Add, Format::FP32, a, mask->addr, a, n});
  } else if (mask) {
    cycles += execute(tile, cgra::ArithVuV{ArithOp::Add, Format::FP32, a, mask->addr, a, n, d});
  }
  cycles += detail::softmax_rows_f32(tile, a, t, max, sum, r, d);
  return cycles + detail::narrow(tile, out.format, a, out.addr, n);
}

OpCost softmax_cost(const ChipConfig& config, Format format, const Shape4& slice, bool masked) {
  const uint64_t imm_bytes = softmax_imm_bytes(slice);
  return cost_only_run(config, imm_bytes, [&](Tile& tile, SpmArena& arena) {
    const MemLayout layout = slice.n == 1 ? MemLayout::Tensor : MemLayout::NTensor;
    const Tsr in = arena.tensor(format, layout, slice);
    const Tsr out = arena.tensor(format, layout, slice);
    const Tsr mask = arena.tensor(Format::FP32, layout, slice);
    const Tsr imm = imm_tsr(arena.allocate(imm_bytes), imm_bytes);
    return op_softmax(tile, {}, in, masked ? &mask : nullptr, imm, out);
  });
}

}  // namespace tg::sim::oplib
