// op_softmax against the core reference's soft_max (scale, optional mask: one row for all rows or
// one per row, -inf entries included) per float format, rows of prime and edge widths, one tile
// and split over four tiles.
#include <gtest/gtest.h>

#include <limits>

#include "oplib_test_utils.h"
#include "tilegraph/sim/oplib/softmax.h"

namespace tg::sim {
namespace {

using namespace oplib;

void run_softmax(Format f, const Shape4& s, int tiles, bool masked, test::Rng& rng) {
  const std::string what = std::string(format_name(f)) + " " + shape_string(s) + " tiles " + std::to_string(tiles) +
                           (masked ? " masked" : "");
  SCOPED_TRACE(what);
  Chip chip(test::mesh(tiles == 1 ? 1 : 2, tiles == 1 ? 1 : 2));
  const std::vector<float> x = test::ddr_put(chip, 0, test::random_values(rng, s.elements(), -4.0f, 4.0f), f);
  std::vector<float> mask = test::random_values(rng, s.c);
  mask[size_t(s.c) / 2] = -std::numeric_limits<float>::infinity();  // a masked-out position
  const float scale = 0.7f;
  const Dims step{1, 1, s.w, s.c};  // one row of rows at a time
  const MemLayout layout = s.n == 1 ? MemLayout::Tensor : MemLayout::NTensor;
  test::run_sliced(chip, tiles, f, layout, s, step, 1, 0, 1 << 24,
                   [&](Tile& tile, const Tsr& in, SpmArena& arena, const Tsr& out) {
                     const Tsr m = test::put_constant(tile, arena, mask, {1, 1, 1, s.c});
                     const Tsr imm = test::imm_of(arena, softmax_imm_bytes(in.shape.real()));
                     return op_softmax(tile, {scale}, in, masked ? &m : nullptr, imm, out);
                   });
  test::expect_no_hazards(chip);
  Context ctx;
  Tensor* xt = test::tensor_of(ctx, x, {s.c, s.w * s.h * s.n});
  Tensor* mt = nullptr;
  if (masked) {  // the reference takes a mask row per row
    std::vector<float> rows;
    for (int64_t r = 0; r < s.w * s.h * s.n; ++r) rows.insert(rows.end(), mask.begin(), mask.end());
    mt = test::tensor_of(ctx, rows, {s.c, s.w * s.h * s.n});
  }
  test::expect_close(test::ddr_get(chip, 1 << 24, s.elements(), f),
                     test::reference_result(soft_max(ctx, xt, mt, scale)), f, what, test::oplib_abs_tolerance(f));
}

TEST(OplibSoftmax, MatchesReference) {
  test::Rng rng(31);
  for (Format f : test::kOplibFormats) {
    for (int64_t d : {int64_t(2), int64_t(13), int64_t(64), int64_t(127), int64_t(257)}) {
      for (bool masked : {false, true}) {
        run_softmax(f, {1, 3, 5, d}, 1, masked, rng);
        run_softmax(f, {2, 3, 3, d}, 4, masked, rng);
      }
    }
  }
}

TEST(OplibSoftmax, FullMaskPerRowAndCost) {
  Chip chip(test::mesh(1, 1));
  Tile& tile = chip.tile(0);
  SpmArena arena(tile.spm().size());
  test::Rng rng(32);
  const Shape4 s{1, 1, 4, 33};
  const Tsr in = arena.tensor(Format::FP32, MemLayout::Tensor, s);
  const std::vector<float> x = test::put(tile, in.addr, test::random_values(rng, s.elements()), Format::FP32);
  const std::vector<float> mask = test::random_values(rng, s.elements());
  const Tsr m = test::put_constant(tile, arena, mask, s);
  const Tsr out = arena.tensor(Format::FP32, MemLayout::Tensor, s);
  const uint64_t cycles = op_softmax(tile, {}, in, &m, test::imm_of(arena, softmax_imm_bytes(s)), out);
  Context ctx;
  Tensor* ref = soft_max(ctx, test::tensor_of(ctx, x, {33, 4}), test::tensor_of(ctx, mask, {33, 4}));
  test::expect_close(test::get(tile, out.addr, s.elements(), Format::FP32), test::reference_result(ref), Format::FP32,
                     "per-row mask", 1e-6);
  EXPECT_EQ(softmax_cost(test::mesh(1, 1), Format::FP32, s, true).cycles, cycles);
  test::expect_error([&] { op_softmax(tile, {}, in, &in, imm_tsr(0, 16), out); }, "op_softmax: imm holds 16 bytes");
}

}  // namespace
}  // namespace tg::sim
