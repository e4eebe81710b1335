// op_binary, op_activation and op_scale against the core reference's add/sub/mul/div, unary and
// scale, per float format and layout (the aligned layouts too: the op runs over the padding and
// the store takes only the data), sizes around the alignment boundaries, split over four tiles.
#include <gtest/gtest.h>

#include "oplib_test_utils.h"
#include "tilegraph/sim/oplib/elementwise.h"

namespace tg::sim {
namespace {

using namespace oplib;
using cgra::ArithOp;
using cgra::UnaryOp;

constexpr MemLayout kLayouts[] = {MemLayout::NTensor, MemLayout::NCx};

TEST(OplibElementwise, BinaryMatchesReference) {
  test::Rng rng(41);
  const std::pair<ArithOp, Tensor* (*)(Context&, Tensor*, Tensor*)> ops[] = {
      {ArithOp::Add, add}, {ArithOp::Sub, sub}, {ArithOp::Mul, mul}, {ArithOp::Div, div}};
  for (Format f : test::kOplibFormats) {
    for (MemLayout layout : kLayouts) {
      for (int64_t c : {int64_t(1), int64_t(33), int64_t(65), int64_t(131)}) {
        for (const auto& [op, build] : ops) {
          const Shape4 s{3, 2, 3, c};
          const std::string what = std::string(cgra::arith_op_name(op)) + " " + std::string(format_name(f)) + " " +
                                   std::string(mem_layout_name(layout)) + " " + shape_string(s);
          Chip chip(test::mesh(2, 2));
          const std::vector<float> a = test::ddr_put(chip, 0, test::random_values(rng, s.elements()), f);
          const std::vector<float> b =
              test::ddr_put(chip, 1 << 22, test::random_values(rng, s.elements(), 0.5f, 2.0f), f);
          test::run_split(chip, 4, s, 1, [&](Tile& tile, GShape& range) {
            SpmArena arena(tile.spm().size());
            GShape b_range = range;
            Tsr x{f, 0, layout, {}}, y{f, 0, layout, {}};
            x.shape.shape_slice = y.shape.shape_slice = {1, 1, s.w, c};
            x.addr = arena.allocate(x.allocated_bytes());
            y.addr = arena.allocate(y.allocated_bytes());
            op_dma_load(tile, range, 0, x);
            op_dma_load(tile, b_range, 1 << 22, y);
            op_binary(tile, op, x, y, x);
            op_store_var(tile, x, 1 << 24);
          });
          test::expect_no_hazards(chip);
          Context ctx;
          Tensor* ref = build(ctx, test::tensor_of(ctx, a, {s.elements()}), test::tensor_of(ctx, b, {s.elements()}));
          test::expect_close(test::ddr_get(chip, 1 << 24, s.elements(), f), test::reference_result(ref), f, what,
                             test::oplib_abs_tolerance(f));
        }
      }
    }
  }
}

TEST(OplibElementwise, RowBroadcast) {
  Chip chip(test::mesh(1, 1));
  Tile& tile = chip.tile(0);
  SpmArena arena(tile.spm().size());
  test::Rng rng(42);
  const Shape4 s{2, 1, 3, 37};
  const Tsr a = arena.tensor(Format::BF16, MemLayout::NTensor, s);
  const Tsr row = arena.tensor(Format::BF16, MemLayout::Tensor, {1, 1, 1, 37});
  const std::vector<float> av = test::put(tile, a.addr, test::random_values(rng, s.elements()), Format::BF16);
  const std::vector<float> rv = test::put(tile, row.addr, test::random_values(rng, 37), Format::BF16);
  op_binary(tile, ArithOp::Mul, a, row, a);
  Context ctx;
  Tensor* ref = mul(ctx, test::tensor_of(ctx, av, {37, 6}), test::tensor_of(ctx, rv, {37}));
  test::expect_close(test::get(tile, a.addr, s.elements(), Format::BF16), test::reference_result(ref), Format::BF16,
                     "row broadcast");
  const Tsr odd = arena.tensor(Format::BF16, MemLayout::Tensor, {1, 1, 2, 37});
  test::expect_error([&] { op_binary(tile, ArithOp::Mul, a, odd, a); }, "op_binary: b 1x1x2x37 is neither a's shape");
}

TEST(OplibElementwise, ActivationsAndScaleMatchReference) {
  test::Rng rng(43);
  const std::pair<UnaryOp, tg::UnaryOp> acts[] = {
      {UnaryOp::Relu, tg::UnaryOp::RELU},       {UnaryOp::Gelu, tg::UnaryOp::GELU}, {UnaryOp::Silu, tg::UnaryOp::SILU},
      {UnaryOp::Sigmoid, tg::UnaryOp::SIGMOID}, {UnaryOp::Tanh, tg::UnaryOp::TANH}, {UnaryOp::Exp, tg::UnaryOp::EXP}};
  for (Format f : test::kOplibFormats) {
    for (MemLayout layout : kLayouts) {
      const Shape4 s{2, 3, 1, 67};
      for (const auto& [op, ref_op] : acts) {
        Chip chip(test::mesh(2, 2));
        const std::vector<float> x = test::ddr_put(chip, 0, test::random_values(rng, s.elements()), f);
        test::run_sliced(
            chip, 4, f, layout, s, {1, 1, 1, 67}, 1, 0, 1 << 24,
            [&](Tile& tile, const Tsr& in, SpmArena&, const Tsr& out) { return op_activation(tile, op, in, out); });
        Context ctx;
        test::expect_close(test::ddr_get(chip, 1 << 24, s.elements(), f),
                           test::reference_result(unary(ctx, test::tensor_of(ctx, x, {s.elements()}), ref_op)), f,
                           std::string(cgra::unary_op_name(op)) + " " + std::string(format_name(f)),
                           test::oplib_abs_tolerance(f));
      }
      Chip chip(test::mesh(2, 2));
      const std::vector<float> x = test::ddr_put(chip, 0, test::random_values(rng, s.elements()), f);
      test::run_sliced(chip, 4, f, layout, s, {1, 2, 1, 67}, 1, 0, 1 << 24,
                       [&](Tile& tile, const Tsr& in, SpmArena& arena, const Tsr& out) {
                         return op_scale(tile, 1.5f, -0.25f, in,
                                         test::imm_of(arena, scale_imm_bytes(f, layout, in.shape.real())), out);
                       });
      Context ctx;
      test::expect_close(test::ddr_get(chip, 1 << 24, s.elements(), f),
                         test::reference_result(scale(ctx, test::tensor_of(ctx, x, {s.elements()}), 1.5f, -0.25f)), f,
                         "scale " + std::string(format_name(f)), test::oplib_abs_tolerance(f));
    }
  }
  EXPECT_GT(activation_cost(test::mesh(1, 1), UnaryOp::Exp, Format::FP16, MemLayout::NCx, {2, 3, 1, 67}).cycles,
            activation_cost(test::mesh(1, 1), UnaryOp::Relu, Format::FP16, MemLayout::NCx, {2, 3, 1, 67}).cycles);
}

}  // namespace
}  // namespace tg::sim
