// op_batchnorm_inference against the core reference's batch_norm: every float format and layout,
// the channel counts around the 32/64 alignment boundaries, one tile and split over four tiles
// (by rows, and in time by slices of rows and of 64 channels), as a generated main.c runs it.
#include <gtest/gtest.h>

#include "oplib_test_utils.h"
#include "tilegraph/sim/oplib/batchnorm.h"

namespace tg::sim {
namespace {

using namespace oplib;

constexpr int64_t kChannels[] = {1, 31, 32, 33, 63, 64, 65, 127, 128, 129};

struct Case {
  Format format;
  MemLayout layout;
  Shape4 shape;
  Dims step;  // slice per iteration
  int tiles;
};

// Runs the op over DDR tensors on `c.tiles` tiles and compares with the reference.
void run_case(const Case& c, test::Rng& rng) {
  const std::string what = std::string(format_name(c.format)) + " " + std::string(mem_layout_name(c.layout)) + " " +
                           shape_string(c.shape) + " step " + dims_string(c.step) + " on " + std::to_string(c.tiles) +
                           " tiles";
  SCOPED_TRACE(what);
  Chip chip(test::mesh(c.tiles == 1 ? 1 : 2, c.tiles == 1 ? 1 : 2));
  const Shape4& s = c.shape;
  const uint64_t x_ddr = 0, y_ddr = 1 << 24, ch_ddr = 1 << 26;
  const std::vector<float> x = test::ddr_put(chip, x_ddr, test::random_values(rng, s.elements()), c.format);
  const std::vector<float> mean = test::random_values(rng, s.c), var = test::random_values(rng, s.c, 0.1f, 3.0f);
  const std::vector<float> gamma = test::random_values(rng, s.c), beta = test::random_values(rng, s.c);
  const std::vector<float>* vectors[] = {&gamma, &beta, &mean, &var};
  for (int i = 0; i < 4; ++i) test::ddr_put(chip, ch_ddr + uint64_t(i) * 4096, *vectors[i], Format::FP32);

  uint64_t cycles = 0;
  test::run_split(chip, c.tiles, s, 1, [&](Tile& tile, GShape& range) {
    SpmArena arena(tile.spm().size());
    Tsr in{c.format, 0, c.layout, {}};
    in.shape.shape_slice = c.step;
    in.addr = arena.allocate(in.allocated_bytes());
    cycles += op_dma_load(tile, range, x_ddr, in);
    Tsr ch[4];
    for (int i = 0; i < 4; ++i) {
      ch[i].addr = arena.allocate(LayoutGeometry({1, 1, 1, c.step[3]}, Format::FP32, MemLayout::Cx).total_bytes());
      cycles += op_dma_load_channels(tile, ch_ddr + uint64_t(i) * 4096, in.shape, ch[i]);
    }
    Tsr out = in;
    out.addr = arena.allocate(in.allocated_bytes());
    const uint64_t imm_bytes = batchnorm_inference_imm_bytes(c.format, c.layout, shape_of(c.step));
    const Tsr imm = imm_tsr(arena.allocate(imm_bytes), imm_bytes);
    cycles += op_batchnorm_inference(tile, BatchNormParam{1e-5f}, in, ch[0], ch[1], ch[2], ch[3], imm, out);
    cycles += op_store_var(tile, out, y_ddr);
  });
  EXPECT_GT(cycles, 0u);
  test::expect_no_hazards(chip);

  Context ctx;
  Tensor* xt = test::tensor_of(ctx, x, {s.c, s.w, s.h, s.n});
  Tensor* ref = batch_norm(ctx, xt, test::tensor_of(ctx, mean, {s.c}), test::tensor_of(ctx, var, {s.c}),
                           test::tensor_of(ctx, gamma, {s.c}), test::tensor_of(ctx, beta, {s.c}), 1e-5f, 0);
  test::expect_close(test::ddr_get(chip, y_ddr, s.elements(), c.format), test::reference_result(ref), c.format, what,
                     test::oplib_abs_tolerance(c.format));
}

TEST(OplibBatchNorm, EveryChannelCountFormatAndLayoutOnOneTile) {
  test::Rng rng(11);
  for (Format f : test::kOplibFormats) {
    for (int64_t c : kChannels) {
      const Shape4 shape{3, 2, 3, c};
      run_case({f, MemLayout::NCx, shape, dims_of(shape), 1}, rng);
      run_case({f, MemLayout::NTensor, shape, dims_of(shape), 1}, rng);
      const Shape4 one{1, 3, 2, c};
      run_case({f, MemLayout::Cx, one, dims_of(one), 1}, rng);
      run_case({f, MemLayout::Tensor, one, dims_of(one), 1}, rng);
    }
  }
}

TEST(OplibBatchNorm, SplitOverTilesAndInTime) {
  test::Rng rng(12);
  for (Format f : test::kOplibFormats) {
    for (int64_t c : {int64_t(30), int64_t(129)}) {
      const Shape4 shape{4, 7, 2, c};
      // Rows over four tiles, each walking its rows two at a time and a batch at a time.
      run_case({f, MemLayout::NCx, shape, {1, 2, 2, c}, 4}, rng);
      // One tile walking 64 channels at a time (the Cx blocks), two batches at a time.
      run_case({f, MemLayout::NCx, shape, {2, 7, 2, 64}, 1}, rng);
    }
  }
}

TEST(OplibBatchNorm, CostQueryMatchesTheRunAndStatesImm) {
  const ChipConfig config = test::mesh(1, 1);
  const Shape4 shape{2, 4, 4, 129};
  const OpCost fp16 = batchnorm_inference_cost(config, Format::FP16, MemLayout::NCx, shape);
  const OpCost fp32 = batchnorm_inference_cost(config, Format::FP32, MemLayout::NCx, shape);
  const LayoutGeometry g(shape, Format::FP16, MemLayout::NCx);
  EXPECT_EQ(fp16.imm_bytes, 2 * g.batch_stride() * 2);
  EXPECT_EQ(fp32.imm_bytes, 0u);
  EXPECT_GT(fp16.cycles, fp32.cycles);  // the widening and narrowing cost

  // The query's cycles are the op's: run it on data and compare.
  Chip chip(config);
  Tile& tile = chip.tile(0);
  SpmArena arena(tile.spm().size());
  test::Rng rng(13);
  const Tsr in = arena.tensor(Format::FP16, MemLayout::NCx, shape);
  std::vector<uint8_t> zeros(in.allocated_bytes(), 0);
  tile.spm().write(in.addr, zeros.data(), zeros.size());
  Tsr ch[4];
  for (Tsr& t : ch) {
    t = arena.tensor(Format::FP32, MemLayout::Cx, {1, 1, 1, shape.c}, 1);
    test::put(tile, t.addr, test::random_values(rng, t.allocated_bytes() / 4, 0.5f, 1.0f), Format::FP32);
  }
  const Tsr out = arena.tensor(Format::FP16, MemLayout::NCx, shape);
  const Tsr imm = imm_tsr(arena.allocate(fp16.imm_bytes), fp16.imm_bytes);
  EXPECT_EQ(op_batchnorm_inference(tile, {}, in, ch[0], ch[1], ch[2], ch[3], imm, out), fp16.cycles);
}

TEST(OplibBatchNorm, BadOperandsAreNamed) {
  Chip chip(test::mesh(1, 1));
  Tile& tile = chip.tile(0);
  SpmArena arena(tile.spm().size());
  const Shape4 shape{1, 2, 2, 40};
  const Tsr in = arena.tensor(Format::FP16, MemLayout::NCx, shape);
  const Tsr ch = arena.tensor(Format::FP32, MemLayout::Cx, {1, 1, 1, 40}, 1);
  const Tsr small = arena.tensor(Format::FP32, MemLayout::Cx, {1, 1, 1, 39}, 1);
  const Tsr imm = imm_tsr(arena.allocate(64), 64);
  test::expect_error([&] { op_batchnorm_inference(tile, {}, in, small, ch, ch, ch, imm, in); },
                     "op_batchnorm_inference: scale has 39 channels, in has 40");
  test::expect_error([&] { op_batchnorm_inference(tile, {}, in, ch, ch, ch, ch, imm, in); },
                     "op_batchnorm_inference: imm holds 64 bytes, the op needs");
  Tsr i8 = in;
  i8.format = Format::INT8;
  test::expect_error([&] { op_batchnorm_inference(tile, {}, i8, ch, ch, ch, ch, imm, i8); },
                     "op_batchnorm_inference: in is int8 (takes fp32, fp16, bf16)");
}

}  // namespace
}  // namespace tg::sim
