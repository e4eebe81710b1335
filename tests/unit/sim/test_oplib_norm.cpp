// op_rmsnorm and op_layernorm against the core reference's rms_norm and norm (times gamma, plus
// beta) per float format, on rows of prime and edge widths, one tile and split over four tiles in
// slices of rows.
#include <gtest/gtest.h>

#include "oplib_test_utils.h"
#include "tilegraph/sim/oplib/norm.h"

namespace tg::sim {
namespace {

using namespace oplib;

constexpr int64_t kWidths[] = {1, 7, 31, 64, 127, 129};

void run_norm(bool layer, Format f, const Shape4& s, const Dims& step, int tiles, test::Rng& rng) {
  const std::string what = std::string(layer ? "layernorm " : "rmsnorm ") + std::string(format_name(f)) + " " +
                           shape_string(s) + " step " + dims_string(step) + " tiles " + std::to_string(tiles);
  SCOPED_TRACE(what);
  Chip chip(test::mesh(tiles == 1 ? 1 : 2, tiles == 1 ? 1 : 2));
  const std::vector<float> x = test::ddr_put(chip, 0, test::random_values(rng, s.elements()), f);
  const std::vector<float> gamma = test::random_values(rng, s.c), beta = test::random_values(rng, s.c);
  const MemLayout layout = s.n == 1 ? MemLayout::Tensor : MemLayout::NTensor;
  const uint64_t cycles = test::run_sliced(
      chip, tiles, f, layout, s, step, 1, 0, 1 << 24, [&](Tile& tile, const Tsr& in, SpmArena& arena, const Tsr& out) {
        const Tsr g = test::put_constant(tile, arena, gamma, {1, 1, 1, s.c});
        const Tsr b = test::put_constant(tile, arena, beta, {1, 1, 1, s.c});
        const Tsr imm = test::imm_of(arena, norm_imm_bytes(in.shape.real()));
        return layer ? op_layernorm(tile, {1e-5f}, in, &g, &b, imm, out) : op_rmsnorm(tile, {1e-5f}, in, &g, imm, out);
      });
  EXPECT_GT(cycles, 0u);
  test::expect_no_hazards(chip);
  Context ctx;
  Tensor* xt = test::tensor_of(ctx, x, {s.c, s.w, s.h, s.n});
  Tensor* ref = layer ? norm(ctx, xt, 1e-5f) : rms_norm(ctx, xt, 1e-5f);
  ref = mul(ctx, ref, test::tensor_of(ctx, gamma, {s.c}));
  if (layer) ref = add(ctx, ref, test::tensor_of(ctx, beta, {s.c}));
  test::expect_close(test::ddr_get(chip, 1 << 24, s.elements(), f), test::reference_result(ref), f, what,
                     test::oplib_abs_tolerance(f));
}

TEST(OplibNorm, RmsAndLayerNormMatchReference) {
  test::Rng rng(21);
  for (bool layer : {false, true}) {
    for (Format f : test::kOplibFormats) {
      for (int64_t d : kWidths) {
        const Shape4 s{2, 3, 5, d};
        run_norm(layer, f, s, dims_of(s), 1, rng);
        run_norm(layer, f, s, {1, 2, 5, d}, 4, rng);  // rows over tiles, two rows of 5 at a time
      }
    }
  }
}

TEST(OplibNorm, CostQueryAndErrors) {
  const ChipConfig config = test::mesh(1, 1);
  const OpCost c = rmsnorm_cost(config, Format::BF16, {1, 1, 4, 256});
  EXPECT_EQ(c.imm_bytes, norm_imm_bytes({1, 1, 4, 256}));
  EXPECT_GT(c.cycles, 0u);
  EXPECT_GT(layernorm_cost(config, Format::BF16, {1, 1, 4, 256}).cycles, c.cycles);
  Chip chip(config);
  SpmArena arena(chip.tile(0).spm().size());
  const Tsr in = arena.tensor(Format::FP16, MemLayout::NCx, {1, 1, 4, 64});
  test::expect_error([&] { op_rmsnorm(chip.tile(0), {}, in, nullptr, imm_tsr(0, 0), in); },
                     "op_rmsnorm: in has layout NCx, not accepted here");
}

}  // namespace
}  // namespace tg::sim
