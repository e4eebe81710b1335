#include "tilegraph/sim/oplib/elementwise.h"

#include "oplib/engine_order.h"
#include "oplib/op_checks.h"

namespace tg::sim::oplib {

namespace {

constexpr std::initializer_list<Format> kFormats = {Format::FP32, Format::FP16, Format::BF16};

// Elements of the slice's buffer, padding included.
int64_t buffer_elements(const Tsr& t) {
  const LayoutGeometry g = t.geometry();
  return int64_t(g.total_bytes() / g.element_bytes());
}

void require_like(const char* op, const Tsr& in, const Tsr& out) {
  detail::require_format(op, "in", in, kFormats);
  detail::require(out.format == in.format && out.layout == in.layout, op, "out must have in's format and layout");
  detail::require_same_shape(op, "in", in, "out", out);
}

}  // namespace

uint64_t op_binary(Tile& tile, cgra::ArithOp op, const Tsr& a, const Tsr& b, const Tsr& out) {
  const char* name = "op_binary";
  require_like(name, a, out);
  detail::require(b.format == a.format, name, "b must have a's format");
  const int64_t n = buffer_elements(a);
  detail::after_transfers(tile);
  if (b.shape.shape_real == a.shape.shape_real && b.layout == a.layout) {
    return execute(tile, cgra::ArithVV{op, a.format, a.addr, b.addr, out.addr, n});
  }
  const Shape4 bs = b.shape.real();
  detail::require(
      !a.geometry().aligned() && !b.geometry().aligned() && bs.n * bs.h * bs.w == 1 && bs.c == a.shape.real().c, name,
      "b " + dims_string(b.shape.shape_real) + " is neither a's shape " + dims_string(a.shape.shape_real) +
          " nor one dense row of it");
  return execute(tile, cgra::ArithVuV{op, a.format, a.addr, b.addr, out.addr, n, bs.c});
}

uint64_t op_activation(Tile& tile, cgra::UnaryOp op, const Tsr& in, const Tsr& out) {
  require_like("op_activation", in, out);
  detail::after_transfers(tile);
  return execute(tile, cgra::UnaryV{op, in.format, in.addr, out.addr, buffer_elements(in)});
}

uint64_t scale_imm_bytes(Format format, MemLayout layout, const Shape4& slice) {
  if (format == Format::FP32) return 0;
  return LayoutGeometry(slice, Format::FP32, layout).total_bytes();
}

uint64_t op_scale(Tile& tile, float s, float bias, const Tsr& in, const Tsr& imm, const Tsr& out) {
  using cgra::ArithOp;
  require_like("op_scale", in, out);
  const int64_t n = buffer_elements(in);
  detail::after_transfers(tile);
  if (in.format == Format::FP32) {
    return execute(tile, cgra::ArithVS{ArithOp::Mul, Format::FP32, in.addr, s, out.addr, n}) +
           execute(tile, cgra::ArithVS{ArithOp::Add, Format::FP32, out.addr, bias, out.addr, n});
  }
  detail::require_imm("op_scale", imm, uint64_t(n) * 4);
  return execute(tile, cgra::ConvertV{in.format, Format::FP32, in.addr, imm.addr, n}) +
         execute(tile, cgra::ArithVS{ArithOp::Mul, Format::FP32, imm.addr, s, imm.addr, n}) +
         execute(tile, cgra::ArithVS{ArithOp::Add, Format::FP32, imm.addr, bias, imm.addr, n}) +
         execute(tile, cgra::ConvertV{Format::FP32, in.format, imm.addr, out.addr, n});
}

OpCost binary_cost(const ChipConfig& config, cgra::ArithOp op, Format format, MemLayout layout, const Shape4& slice) {
  return cost_only_run(config, 0, [&](Tile& tile, SpmArena& arena) {
    const Tsr a = arena.tensor(format, layout, slice), b = arena.tensor(format, layout, slice);
    return op_binary(tile, op, a, b, a);
  });
}

OpCost activation_cost(const ChipConfig& config, cgra::UnaryOp op, Format format, MemLayout layout,
                       const Shape4& slice) {
  return cost_only_run(config, 0, [&](Tile& tile, SpmArena& arena) {
    const Tsr a = arena.tensor(format, layout, slice);
    return op_activation(tile, op, a, a);
  });
}

OpCost scale_cost(const ChipConfig& config, Format format, MemLayout layout, const Shape4& slice) {
  const uint64_t imm_bytes = scale_imm_bytes(format, layout, slice);
  return cost_only_run(config, imm_bytes, [&](Tile& tile, SpmArena& arena) {
    const Tsr a = arena.tensor(format, layout, slice);
    return op_scale(tile, 2.0f, 1.0f, a, imm_tsr(arena.allocate(imm_bytes), imm_bytes), a);
  });
}

}  // namespace tg::sim::oplib
