#include "oplib/norm_steps.h"

#include "oplib/op_checks.h"
#include "oplib/row_steps.h"
#include "tilegraph/sim/oplib/norm.h"

namespace tg::sim::oplib {

uint64_t norm_imm_bytes(const Shape4& s) {
  const uint64_t rows = uint64_t(s.n * s.h * s.w);
  return 2 * rows * uint64_t(s.c) * 4 + 2 * rows * 4;
}

namespace {

OpCost norm_cost(const ChipConfig& config, Format format, const Shape4& slice, bool layer, bool affine) {
  const uint64_t imm_bytes = norm_imm_bytes(slice);
  return cost_only_run(config, imm_bytes, [&](Tile& tile, SpmArena& arena) {
    const MemLayout layout = slice.n == 1 ? MemLayout::Tensor : MemLayout::NTensor;
    const Tsr in = arena.tensor(format, layout, slice);
    const Tsr out = arena.tensor(format, layout, slice);
    const Tsr gamma = arena.tensor(Format::FP32, MemLayout::Tensor, {1, 1, 1, slice.c}, 1);
    const Tsr beta = arena.tensor(Format::FP32, MemLayout::Tensor, {1, 1, 1, slice.c}, 1);
    const Tsr imm = imm_tsr(arena.allocate(imm_bytes), imm_bytes);
    const Tsr* g = affine ? &gamma : nullptr;
    return layer ? op_layernorm(tile, {}, in, g, affine ? &beta : nullptr, imm, out)
                 : op_rmsnorm(tile, {}, in, g, imm, out);
  });
}

}  // namespace

OpCost rmsnorm_cost(const ChipConfig& config, Format format, const Shape4& slice, bool affine) {
  return norm_cost(config, format, slice, false, affine);
}
OpCost layernorm_cost(const ChipConfig& config, Format format, const Shape4& slice, bool affine) {
  return norm_cost(config, format, slice, true, affine);
}

namespace detail {

Rows check_rows(const char* op, const Tsr& in, const Tsr* gamma, const Tsr* beta, const Tsr& imm, const Tsr& out) {
  require_format(op, "in", in, {Format::FP32, Format::FP16, Format::BF16});
  require_layout(op, "in", in, {MemLayout::Tensor, MemLayout::NTensor});
  require_layout(op, "out", out, {MemLayout::Tensor, MemLayout::NTensor});
  require(out.format == in.format, op, "out must have in's format");
  require_same_shape(op, "in", in, "out", out);
  const Shape4 s = in.shape.real();
  for (const auto& [name, t] : {std::pair<const char*, const Tsr*>{"gamma", gamma}, {"beta", beta}}) {
    if (!t) continue;
    require_format(op, name, *t, {Format::FP32});
    require(t->shape.real().elements() == s.c, op,
            std::string(name) + " has " + std::to_string(t->shape.real().elements()) + " elements, rows have " +
                std::to_string(s.c));
  }
  require_imm(op, imm, norm_imm_bytes(s));
  Rows rows;
  rows.r = s.n * s.h * s.w;
  rows.d = s.c;
  const uint64_t bytes = uint64_t(rows.r * rows.d) * 4;
  rows.a = imm.addr;
  rows.t = rows.a + bytes;
  rows.stat0 = rows.t + bytes;
  rows.stat1 = rows.stat0 + uint64_t(rows.r) * 4;
  return rows;
}

uint64_t divide_by_root_mean_square(Tile& tile, const Rows& x, float epsilon, uint64_t stat) {
  using cgra::ArithOp;
  const int64_t n = x.r * x.d;
  uint64_t cycles = execute(tile, cgra::ArithVV{ArithOp::Mul, Format::FP32, x.t, x.t, x.a, n});  // squares, over x
  cycles += reduce_columns(tile, cgra::ReduceOp::Mean, x.a, stat, x.d, x.r);
  cycles += execute(tile, cgra::ArithVS{ArithOp::Add, Format::FP32, stat, epsilon, stat, x.r});
  cycles += execute(tile, cgra::UnaryV{cgra::UnaryOp::Rsqrt, Format::FP32, stat, stat, x.r});
  return cycles + apply_columns(tile, ArithOp::Mul, x.t, stat, x.d, x.r);
}

uint64_t finish_rows(Tile& tile, const Rows& x, const Tsr* gamma, const Tsr* beta, const Tsr& out) {
  const int64_t n = x.r * x.d;
  uint64_t cycles = transpose_f32(tile, x.t, x.a, x.d, x.r);
  if (gamma) cycles += execute(tile, cgra::ArithVuV{cgra::ArithOp::Mul, Format::FP32, x.a, gamma->addr, x.a, n, x.d});
  if (beta) cycles += execute(tile, cgra::ArithVuV{cgra::ArithOp::Add, Format::FP32, x.a, beta->addr, x.a, n, x.d});
  return cycles + narrow(tile, out.format, x.a, out.addr, n);
}

}  // namespace detail
}  // namespace tg::sim::oplib
