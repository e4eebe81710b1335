// The load/store steps (G_SHAPE walked slice by slice, L_SHAPE filled in, the channel vectors of a
// slice), op_transpose against the reference's transpose and op_embedding_gather against
// get_rows, per format, with edge and prime sizes and split over tiles.
#include <gtest/gtest.h>

#include "oplib_test_utils.h"
#include "tilegraph/sim/lsu.h"
#include "tilegraph/sim/oplib/data_layout_ops.h"

namespace tg::sim {
namespace {

using namespace oplib;

TEST(OplibDataMovement, GShapeWalksTheRangeInSlices) {
  Chip chip(test::mesh(1, 1));
  Tile& tile = chip.tile(0);
  const Shape4 whole{3, 5, 1, 70};
  test::Rng rng(61);
  test::ddr_put(chip, 0, test::random_values(rng, whole.elements()), Format::FP32);
  GShape range = GShape::range(whole, {1, 1, 0, 0}, {3, 5, 1, 70});
  Tsr t{Format::FP32, 0, MemLayout::NCx, {}};
  t.shape.shape_slice = {1, 3, 1, 64};
  std::vector<Dims> starts, reals;
  while (!range.done) {
    op_dma_load(tile, range, 0, t);
    starts.push_back(t.shape.shape_start);
    reals.push_back(t.shape.shape_real);
  }
  // N 1..2, H 1..4 in steps of 3 (1, 4), C 0..69 in steps of 64 (0, 64): 2 x 2 x 2 slices.
  ASSERT_EQ(starts.size(), 8u);
  EXPECT_EQ(starts[0], (Dims{1, 1, 0, 0}));
  EXPECT_EQ(reals[0], (Dims{1, 3, 1, 64}));
  EXPECT_EQ(starts[1], (Dims{1, 1, 0, 64}));
  EXPECT_EQ(reals[1], (Dims{1, 3, 1, 6}));
  EXPECT_EQ(starts[2], (Dims{1, 4, 0, 0}));
  EXPECT_EQ(reals[2], (Dims{1, 1, 1, 64}));
  EXPECT_EQ(starts[7], (Dims{2, 4, 0, 64}));
  test::expect_error([&] { op_dma_load(tile, range, 0, t); },
                     "op_dma_load: the range 1x1x0x0 to 3x5x1x70 is already loaded");
  test::expect_error([] { GShape::range({1, 2, 2, 2}, {0, 0, 0, 0}, {1, 3, 2, 2}); }, "G_SHAPE: range");
}

TEST(OplibDataMovement, LoadStoreRoundTripsEverySliceInEveryLayout) {
  test::Rng rng(62);
  for (Format f : test::kOplibFormats) {
    for (MemLayout layout : {MemLayout::NTensor, MemLayout::NCx}) {
      for (int64_t c : {int64_t(1), int64_t(31), int64_t(33), int64_t(129)}) {
        const Shape4 s{2, 5, 3, c};
        Chip chip(test::mesh(2, 2));
        const std::vector<float> x = test::ddr_put(chip, 0, test::random_values(rng, s.elements()), f);
        test::run_sliced(
            chip, 4, f, layout, s, {1, 2, 2, 64}, 1, 0, 1 << 24,
            [&](Tile& tile, const Tsr& in, SpmArena&, const Tsr& out) {
              return execute(tile, lsu::GatherScatter{in.addr, out.addr, in.geometry().total_bytes(), 1, 0, 0});
            });
        EXPECT_EQ(test::ddr_get(chip, 1 << 24, s.elements(), f), x)
            << format_name(f) << " " << mem_layout_name(layout) << " C " << c;
      }
    }
  }
}

TEST(OplibDataMovement, TransposeMatchesReference) {
  test::Rng rng(63);
  for (Format f : test::kOplibFormats) {
    for (const Shape4& s : {Shape4{1, 1, 1, 1}, Shape4{3, 1, 7, 13}, Shape4{2, 1, 64, 33}}) {
      Chip chip(test::mesh(1, 1));
      Tile& tile = chip.tile(0);
      SpmArena arena(tile.spm().size());
      const Tsr in = arena.tensor(f, MemLayout::NTensor, s);
      const Tsr out = arena.tensor(f, MemLayout::NTensor, {s.n, 1, s.c, s.w});
      const std::vector<float> x = test::put(tile, in.addr, test::random_values(rng, s.elements()), f);
      EXPECT_EQ(op_transpose(tile, in, out), transpose_cost(test::mesh(1, 1), f, s).cycles);
      Context ctx;
      Tensor* ref = cont(ctx, transpose(ctx, test::tensor_of(ctx, x, {s.c, s.w, s.n})));
      test::expect_close(test::get(tile, out.addr, s.elements(), f), test::reference_result(ref), f, "transpose");
    }
  }
}

TEST(OplibDataMovement, EmbeddingGatherMatchesGetRows) {
  test::Rng rng(64);
  for (Format f : test::kOplibFormats) {
    const int64_t rows = 97, d = 37, count = 11;
    Chip chip(test::mesh(2, 2));
    const std::vector<float> table = test::ddr_put(chip, 0, test::random_values(rng, rows * d), f);
    std::vector<int32_t> idx(static_cast<size_t>(count));
    std::uniform_int_distribution<int32_t> pick(0, int32_t(rows - 1));
    for (int32_t& i : idx) i = pick(rng);
    idx[0] = 0;
    idx[1] = int32_t(rows - 1);
    std::vector<float> got;
    for (int t = 0; t < 4; ++t) {  // tile t gathers its share of the indices
      const int64_t lo = count * t / 4, hi = count * (t + 1) / 4;
      Tile& tile = chip.tile(t);
      SpmArena arena(tile.spm().size());
      const Tsr it = arena.tensor(Format::INT32, MemLayout::Tensor, {1, 1, 1, hi - lo}, 1);
      tile.spm().write(it.addr, idx.data() + lo, uint64_t(hi - lo) * 4);
      const Tsr out = arena.tensor(f, MemLayout::Tensor, {1, 1, hi - lo, d}, 2);
      op_embedding_gather(tile, DdrTable{0, f, rows, d}, it, out);
      const std::vector<float> part = test::get(tile, out.addr, (hi - lo) * d, f);
      got.insert(got.end(), part.begin(), part.end());
    }
    Context ctx;
    Tensor* ids = ctx.new_tensor(DType::I32, {count});
    std::copy(idx.begin(), idx.end(), static_cast<int32_t*>(ids->data));
    Tensor* ref = get_rows(ctx, test::tensor_of(ctx, table, {d, rows}), ids);
    test::expect_close(got, test::reference_result(ref), f, "get_rows");
  }
  Chip chip(test::mesh(1, 1));
  Tile& tile = chip.tile(0);
  SpmArena arena(tile.spm().size());
  const Tsr it = arena.tensor(Format::INT32, MemLayout::Tensor, {1, 1, 1, 1}, 1);
  const int32_t bad = 5;
  tile.spm().write(it.addr, &bad, 4);
  const Tsr out = arena.tensor(Format::FP32, MemLayout::Tensor, {1, 1, 1, 4}, 2);
  test::expect_error(
      [&] {
        op_embedding_gather(tile, DdrTable{0, Format::FP32, 5, 4}, it, out);
      },
      "op_rdmaGather on tile 0: index 0 is 5, outside [0, 5)");
  EXPECT_GT(embedding_gather_cost(test::mesh(1, 1), DdrTable{0, Format::BF16, 1000, 64}, 8).cycles, 0u);
}

}  // namespace
}  // namespace tg::sim
