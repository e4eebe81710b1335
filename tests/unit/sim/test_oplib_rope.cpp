// op_rope against the core reference's rope (NORMAL and NEOX, all dims rotated or fewer) per
// float format, with tables from rope_tables, one tile and split over four tiles by heads.
#include <gtest/gtest.h>

#include "oplib_test_utils.h"
#include "tilegraph/sim/oplib/rope.h"

namespace tg::sim {
namespace {

using namespace oplib;

void run_rope(Format f, bool neox, int64_t tokens, int64_t heads, int64_t hd, int64_t n_dims, int tiles,
              test::Rng& rng) {
  const std::string what = std::string(format_name(f)) + (neox ? " neox" : " normal") + " tokens " +
                           std::to_string(tokens) + " heads " + std::to_string(heads) + " hd " + std::to_string(hd) +
                           " n_dims " + std::to_string(n_dims) + " tiles " + std::to_string(tiles);
  SCOPED_TRACE(what);
  const Shape4 s{1, tokens, heads, hd};
  Chip chip(test::mesh(tiles == 1 ? 1 : 2, tiles == 1 ? 1 : 2));
  const std::vector<float> x = test::ddr_put(chip, 0, test::random_values(rng, s.elements()), f);
  std::vector<int32_t> pos(static_cast<size_t>(tokens));
  for (int64_t t = 0; t < tokens; ++t) pos[size_t(t)] = int32_t(17 + 301 * t);
  Context ctx;
  Tensor* pt = ctx.new_tensor(DType::I32, {tokens});
  std::copy(pos.begin(), pos.end(), static_cast<int32_t*>(pt->data));
  RopeParams rp;
  rp.n_dims = int32_t(n_dims);
  rp.mode = neox ? RopeMode::NEOX : RopeMode::NORMAL;
  Tensor* ref = rope(ctx, test::tensor_of(ctx, x, {hd, heads, tokens}), pt, rp);
  const RopeTables tables = rope_tables(RopeYarn::from_node(*ref), pos);
  const RopeParam param{n_dims, neox};
  test::run_sliced(chip, tiles, f, MemLayout::Tensor, s, {1, tokens, 2, hd}, 2, 0, 1 << 24,
                   [&](Tile& tile, const Tsr& in, SpmArena& arena, const Tsr& out) {
                     const Tsr c = test::put_constant(tile, arena, tables.cos, {1, 1, tokens, n_dims / 2});
                     const Tsr sn = test::put_constant(tile, arena, tables.sin, {1, 1, tokens, n_dims / 2});
                     return op_rope(tile, param, in, c, sn, test::imm_of(arena, rope_imm_bytes(param, in.shape.real())),
                                    out);
                   });
  test::expect_no_hazards(chip);
  test::expect_close(test::ddr_get(chip, 1 << 24, s.elements(), f), test::reference_result(ref), f, what,
                     test::oplib_abs_tolerance(f));
}

TEST(OplibRope, MatchesReference) {
  test::Rng rng(71);
  for (Format f : test::kOplibFormats) {
    for (bool neox : {false, true}) {
      run_rope(f, neox, 1, 4, 64, 64, 1, rng);  // a decode step
      run_rope(f, neox, 3, 5, 34, 34, 4, rng);  // heads over tiles
      run_rope(f, neox, 2, 3, 32, 16, 1, rng);  // the last 16 dims copied
    }
  }
}

TEST(OplibRope, CostAndErrors) {
  const RopeParam p{64, false};
  const OpCost c = rope_cost(test::mesh(1, 1), p, Format::BF16, {1, 1, 8, 64});
  EXPECT_EQ(c.imm_bytes, rope_imm_bytes(p, {1, 1, 8, 64}));
  EXPECT_GT(c.cycles, 0u);
  Chip chip(test::mesh(1, 1));
  SpmArena arena(chip.tile(0).spm().size());
  const Tsr x = arena.tensor(Format::FP32, MemLayout::Tensor, {1, 1, 2, 8});
  test::expect_error(
      [&] {
        op_rope(chip.tile(0), {7, false}, x, x, x, imm_tsr(0, 0), x);
      },
      "op_rope: n_dims = 7 must be even");
}

}  // namespace
}  // namespace tg::sim
