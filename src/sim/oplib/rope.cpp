#include "tilegraph/sim/oplib/rope.h"

#include "oplib/engine_order.h"
#include "oplib/op_checks.h"
#include "oplib/row_steps.h"
#include "tilegraph/sim/cgra.h"
#include "tilegraph/sim/lsu.h"

namespace tg::sim::oplib {

namespace {

constexpr const char* kOp = "op_rope";

// Moves the pairs' first (second: `second`) elements between the f32 rows of xf [R][hd] and the
// packed [R][pairs] at packed, in the direction `gather` says.
uint64_t move_halves(Tile& tile, const RopeParam& p, uint64_t xf, uint64_t packed, int64_t rows, int64_t hd,
                     bool second, bool gather) {
  const int64_t pairs = p.n_dims / 2;
  const uint64_t row_bytes = uint64_t(hd) * 4, packed_row = uint64_t(pairs) * 4;
  lsu::GatherScatter g;
  if (p.neox) {  // a contiguous half per row
    const uint64_t at = xf + (second ? packed_row : 0);
    g = gather ? lsu::GatherScatter{at, packed, packed_row, rows, int64_t(row_bytes), int64_t(packed_row)}
               : lsu::GatherScatter{packed, at, packed_row, rows, int64_t(packed_row), int64_t(row_bytes)};
    return execute(tile, g);
  }
  const uint64_t at = xf + (second ? 4 : 0);
  if (p.n_dims == hd) {  // every other element of the whole slice
    g = gather ? lsu::GatherScatter{at, packed, 4, rows * pairs, 8, 4}
               : lsu::GatherScatter{packed, at, 4, rows * pairs, 4, 8};
    return execute(tile, g);
  }
  uint64_t cycles = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const uint64_t x_row = at + uint64_t(r) * row_bytes, p_row = packed + uint64_t(r) * packed_row;
    g = gather ? lsu::GatherScatter{x_row, p_row, 4, pairs, 8, 4} : lsu::GatherScatter{p_row, x_row, 4, pairs, 4, 8};
    cycles += execute(tile, g);
  }
  return cycles;
}

}  // namespace

uint64_t rope_imm_bytes(const RopeParam& p, const Shape4& s) {
  const uint64_t rows = uint64_t(s.n * s.h * s.w);
  return rows * uint64_t(s.c) * 4 + 4 * rows * uint64_t(p.n_dims / 2) * 4;
}

uint64_t op_rope(Tile& tile, const RopeParam& param, const Tsr& x, const Tsr& cos, const Tsr& sin, const Tsr& imm,
                 const Tsr& out) {
  using cgra::ArithOp;
  using detail::require;
  detail::require_format(kOp, "x", x, {Format::FP32, Format::FP16, Format::BF16});
  detail::require_layout(kOp, "x", x, {MemLayout::Tensor, MemLayout::NTensor});
  require(out.format == x.format, kOp, "out must have x's format");
  detail::require_same_shape(kOp, "x", x, "out", out);
  const Shape4 s = x.shape.real();
  require(s.n == 1, kOp, "x " + dims_string(x.shape.shape_real) + " is not 1 x tokens x heads x head_dim");
  const int64_t tokens = s.h, heads = s.w, hd = s.c, pairs = param.n_dims / 2, rows = tokens * heads;
  require(param.n_dims > 0 && param.n_dims % 2 == 0 && param.n_dims <= hd, kOp,
          "n_dims = " + std::to_string(param.n_dims) + " must be even, positive and at most head_dim " +
              std::to_string(hd));
  for (const auto& [name, t] : {std::pair<const char*, const Tsr*>{"cos", &cos}, {"sin", &sin}}) {
    detail::require_format(kOp, name, *t, {Format::FP32});
    require(t->shape.real().elements() == tokens * pairs, kOp,
            std::string(name) + " has " + std::to_string(t->shape.real().elements()) +
                " elements, expected tokens x n_dims/2 = " + std::to_string(tokens * pairs));
  }
  if (rows == 0) return 0;
  detail::require_imm(kOp, imm, rope_imm_bytes(param, s));
  const uint64_t plane = uint64_t(rows * pairs) * 4;
  const uint64_t xf = imm.addr, x0 = xf + uint64_t(rows * hd) * 4, x1 = x0 + plane, t0 = x1 + plane, t1 = t0 + plane;
  detail::after_transfers(tile);
  uint64_t cycles = detail::widen(tile, x.format, x.addr, xf, rows * hd);
  detail::order(tile, {Engine::CT}, Engine::TDMA);
  cycles += move_halves(tile, param, xf, x0, rows, hd, false, true);
  cycles += move_halves(tile, param, xf, x1, rows, hd, true, true);
  detail::order(tile, {Engine::TDMA}, Engine::CT);
  const int64_t per_token = heads * pairs;
  for (int64_t t = 0; t < tokens; ++t) {
    const uint64_t o = uint64_t(t * per_token) * 4, c = cos.addr + uint64_t(t * pairs) * 4,
                   sn = sin.addr + uint64_t(t * pairs) * 4;
    cycles += execute(tile, cgra::ArithVuV{ArithOp::Mul, Format::FP32, x0 + o, c, t0 + o, per_token, pairs});
    cycles += execute(tile, cgra::ArithVuV{ArithOp::Mul, Format::FP32, x1 + o, sn, t1 + o, per_token, pairs});
    cycles += execute(tile, cgra::ArithVuV{ArithOp::Mul, Format::FP32, x0 + o, sn, x0 + o, per_token, pairs});
    cycles += execute(tile, cgra::ArithVuV{ArithOp::Mul, Format::FP32, x1 + o, c, x1 + o, per_token, pairs});
  }
  cycles += execute(tile, cgra::ArithVV{ArithOp::Sub, Format::FP32, t0, t1, t0, rows * pairs});  // x0 cos - x1 sin
  cycles += execute(tile, cgra::ArithVV{ArithOp::Add, Format::FP32, x0, x1, x1, rows * pairs});  // x0 sin + x1 cos
  detail::order(tile, {Engine::CT}, Engine::TDMA);
  cycles += move_halves(tile, param, xf, t0, rows, hd, false, false);
  cycles += move_halves(tile, param, xf, x1, rows, hd, true, false);
  detail::order(tile, {Engine::TDMA}, Engine::CT);
  return cycles + detail::narrow(tile, out.format, xf, out.addr, rows * hd);
}

OpCost rope_cost(const ChipConfig& config, const RopeParam& param, Format format, const Shape4& slice) {
  const uint64_t imm_bytes = rope_imm_bytes(param, slice);
  return cost_only_run(config, imm_bytes, [&](Tile& tile, SpmArena& arena) {
    const Tsr x = arena.tensor(format, MemLayout::Tensor, slice, 3);
    const Tsr table = arena.tensor(Format::FP32, MemLayout::Tensor, {1, 1, slice.h, param.n_dims / 2}, 2);
    const Tsr imm = imm_tsr(arena.allocate(imm_bytes), imm_bytes);
    return op_rope(tile, param, x, table, table, imm, x);
  });
}

RopeTables rope_tables(const RopeYarn& yarn, const std::vector<int32_t>& positions,
                       const std::vector<float>& freq_factors) {
  const int64_t pairs = yarn.n_dims / 2;
  RopeTables t;
  t.cos.resize(positions.size() * size_t(pairs));
  t.sin.resize(t.cos.size());
  for (size_t p = 0; p < positions.size(); ++p) {
    for (int64_t i = 0; i < pairs; ++i) {
      double c, s;
      const double factor = freq_factors.empty() ? 1.0 : double(freq_factors[size_t(i)]);
      yarn.rotation(i, double(positions[p]) * yarn.inverse_frequency(i, factor), &c, &s);
      t.cos[p * size_t(pairs) + size_t(i)] = float(c);
      t.sin[p * size_t(pairs) + size_t(i)] = float(s);
    }
  }
  return t;
}

}  // namespace tg::sim::oplib
