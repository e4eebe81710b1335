// op_pool2d against the core reference's pool_2d (max and avg, ggml's rules) on random shapes:
// batches 1 and 2, channel counts around 32, 64 and 128, images from 1x1 up, windows 1 to 5,
// strides 1 to 3, every padding smaller than the window, per float format. Each case runs the
// whole image (symmetric padding: one PoolTensor) and a split of the output into a 2 x 2 grid of
// windows, each pooled from its halo of the input with the padding of the edges it touches only
// (asymmetric: the padded copy in imm), as a compiled tile program runs it.
#include <gtest/gtest.h>

#include <algorithm>

#include "oplib_test_utils.h"
#include "tilegraph/core/ops.h"
#include "tilegraph/sim/oplib/pool.h"

namespace tg::sim {
namespace {

using namespace oplib;

// The input rows a window of output rows [out_start, out_start + out_size) reads, clipped to the
// image, and the padding the clipped part becomes.
struct Halo {
  int64_t start = 0, size = 0;
  int32_t before = 0, after = 0;
};

Halo halo(int64_t out_start, int64_t out_size, int64_t extent, int32_t k, int32_t s, int32_t p) {
  const int64_t first = out_start * s - p, need = (out_size - 1) * s + k;
  const int64_t lo = std::max<int64_t>(0, first), hi = std::min(extent, first + need);
  return Halo{lo, hi - lo, int32_t(lo - first), int32_t(first + need - hi)};
}

struct PoolCase {
  Shape4 image;  // N x H x W x C
  cgra::PoolOp op;
  int32_t k_h, k_w, s_h, s_w, p_h, p_w;
};

std::string describe(const PoolCase& c, Format f) {
  return std::string(c.op == cgra::PoolOp::Max ? "max " : "avg ") + std::string(format_name(f)) + " " +
         shape_string(c.image) + " k " + std::to_string(c.k_h) + "x" + std::to_string(c.k_w) + " s " +
         std::to_string(c.s_h) + "x" + std::to_string(c.s_w) + " p " + std::to_string(c.p_h) + "x" +
         std::to_string(c.p_w);
}

// The core reference of the case on NHWC values: pool_2d over [W, H, C, N], back to NHWC.
std::vector<float> reference_pool(const PoolCase& c, const std::vector<float>& nhwc, Shape4& out_shape) {
  const Shape4 s = c.image;
  std::vector<float> nchw(nhwc.size());
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t y = 0; y < s.h; ++y)
      for (int64_t x = 0; x < s.w; ++x)
        for (int64_t ch = 0; ch < s.c; ++ch)
          nchw[size_t(((n * s.c + ch) * s.h + y) * s.w + x)] = nhwc[size_t(((n * s.h + y) * s.w + x) * s.c + ch)];
  Context ctx;
  Tensor* in = test::tensor_of(ctx, nchw, {s.w, s.h, s.c, s.n});
  Pool2dParams params;
  params.op = c.op == cgra::PoolOp::Max ? PoolOp::MAX : PoolOp::AVG;
  params.k0 = c.k_w;
  params.k1 = c.k_h;
  params.s0 = c.s_w;
  params.s1 = c.s_h;
  params.p0 = c.p_w;
  params.p1 = c.p_h;
  Tensor* node = pool_2d(ctx, in, params);
  const std::vector<float> ref = test::reference_result(node);
  out_shape = Shape4{s.n, node->ne[1], node->ne[0], s.c};
  std::vector<float> out(ref.size());
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t ch = 0; ch < s.c; ++ch)
      for (int64_t y = 0; y < out_shape.h; ++y)
        for (int64_t x = 0; x < out_shape.w; ++x)
          out[size_t(((n * out_shape.h + y) * out_shape.w + x) * s.c + ch)] =
              ref[size_t(((n * s.c + ch) * out_shape.h + y) * out_shape.w + x)];
  return out;
}

// Pools output rows [oy, oy + oh) and columns [ox, ox + ow) of the case from their halo on tile 0
// and writes them into `out` (N x OH x OW x C); returns the op's cycles.
uint64_t pool_window(const PoolCase& c, Format f, const std::vector<float>& image, const Shape4& out_shape, int64_t oy,
                     int64_t oh, int64_t ox, int64_t ow, std::vector<float>& out) {
  const Shape4 s = c.image;
  const Halo rows = halo(oy, oh, s.h, c.k_h, c.s_h, c.p_h), cols = halo(ox, ow, s.w, c.k_w, c.s_w, c.p_w);
  const Shape4 in_shape{s.n, rows.size, cols.size, s.c};
  std::vector<float> window;
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t y = rows.start; y < rows.start + rows.size; ++y)
      for (int64_t x = cols.start; x < cols.start + cols.size; ++x)
        for (int64_t ch = 0; ch < s.c; ++ch) window.push_back(image[size_t(((n * s.h + y) * s.w + x) * s.c + ch)]);
  Pool2dParam param{c.op, c.k_h, c.k_w, c.s_h, c.s_w, rows.before, rows.after, cols.before, cols.after};
  Chip chip(test::mesh(1, 1));
  Tile& tile = chip.tile(0);
  SpmArena arena(tile.spm().size());
  const MemLayout layout = s.n == 1 ? MemLayout::Tensor : MemLayout::NTensor;
  const Tsr in = arena.tensor(f, layout, in_shape);
  test::put(tile, in.addr, window, f);
  const Shape4 o = pool2d_out_shape(param, in_shape);
  EXPECT_EQ(o, (Shape4{s.n, oh, ow, s.c}));
  const Tsr y = arena.tensor(f, layout, o);
  const uint64_t imm_bytes = pool2d_imm_bytes(param, f, in_shape);
  const uint64_t cycles = op_pool2d(tile, param, in, test::imm_of(arena, imm_bytes), y);
  test::expect_no_hazards(chip);
  const OpCost cost = pool2d_cost(ChipConfig{}, param, f, in_shape);
  EXPECT_EQ(cost.cycles, cycles);
  EXPECT_EQ(cost.imm_bytes, imm_bytes);
  const std::vector<float> got = test::get(tile, y.addr, o.elements(), f);
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t yy = 0; yy < oh; ++yy)
      for (int64_t xx = 0; xx < ow; ++xx)
        for (int64_t ch = 0; ch < s.c; ++ch)
          out[size_t(((n * out_shape.h + oy + yy) * out_shape.w + ox + xx) * s.c + ch)] =
              got[size_t(((n * oh + yy) * ow + xx) * s.c + ch)];
  return cycles;
}

TEST(OplibPool, MatchesReferenceWholeAndInHaloWindows) {
  test::Rng rng(2024);
  const int64_t channels[] = {1, 3, 31, 32, 33, 63, 64, 65, 127, 128, 129};
  const int64_t sizes[] = {1, 2, 3, 5, 7, 8, 13};
  const int32_t windows[] = {1, 2, 3, 5};
  int cases = 0, asymmetric = 0;
  for (int i = 0; cases < 48; ++i) {
    PoolCase c;
    c.image = Shape4{1 + i % 2, sizes[size_t(rng() % 7)], sizes[size_t(rng() % 7)], channels[size_t(i % 11)]};
    c.op = i % 3 == 0 ? cgra::PoolOp::Avg : cgra::PoolOp::Max;
    c.k_h = windows[rng() % 4];
    c.k_w = windows[rng() % 4];
    c.s_h = int32_t(1 + rng() % 3);
    c.s_w = int32_t(1 + rng() % 3);
    c.p_h = int32_t(rng() % uint32_t(c.k_h));
    c.p_w = int32_t(rng() % uint32_t(c.k_w));
    if (c.image.h + 2 * c.p_h < c.k_h || c.image.w + 2 * c.p_w < c.k_w) continue;
    const Format f = test::kOplibFormats[size_t(cases % 3)];
    ++cases;
    const std::string what = describe(c, f);
    SCOPED_TRACE(what);
    // The image as the format holds it: the reference pools the same values.
    Chip scratch(test::mesh(1, 1));
    const std::vector<float> image = test::put(scratch.tile(0), 0, test::random_values(rng, c.image.elements()), f);
    Shape4 o;
    const std::vector<float> ref = reference_pool(c, image, o);
    std::vector<float> whole(ref.size()), split(ref.size());
    pool_window(c, f, image, o, 0, o.h, 0, o.w, whole);
    test::expect_close(whole, ref, f, what + " whole", test::oplib_abs_tolerance(f));
    const int64_t h0 = (o.h + 1) / 2, w0 = (o.w + 1) / 2;
    for (auto [oy, oh] : {std::pair{int64_t(0), h0}, {h0, o.h - h0}}) {
      for (auto [ox, ow] : {std::pair{int64_t(0), w0}, {w0, o.w - w0}}) {
        if (oh == 0 || ow == 0) continue;
        const Halo rows = halo(oy, oh, c.image.h, c.k_h, c.s_h, c.p_h);
        const Halo cols = halo(ox, ow, c.image.w, c.k_w, c.s_w, c.p_w);
        asymmetric += rows.before != rows.after || cols.before != cols.after;
        pool_window(c, f, image, o, oy, oh, ox, ow, split);
      }
    }
    test::expect_close(split, ref, f, what + " split", test::oplib_abs_tolerance(f));
  }
  EXPECT_GT(asymmetric, 10);  // the padded-copy path ran
}

TEST(OplibPool, RefusesBadArguments) {
  Chip chip(test::mesh(1, 1));
  Tile& tile = chip.tile(0);
  SpmArena arena(tile.spm().size());
  const Shape4 s{1, 4, 4, 8};
  const Tsr in = arena.tensor(Format::FP32, MemLayout::Tensor, s);
  test::put(tile, in.addr, std::vector<float>(size_t(s.elements()), 1.0f), Format::FP32);
  const Tsr out = arena.tensor(Format::FP32, MemLayout::Tensor, Shape4{1, 2, 2, 8});
  Pool2dParam p;
  p.pad_top = 2;  // not smaller than the window
  test::expect_error([&] { op_pool2d(tile, p, in, imm_tsr(0, 0), out); }, "padding must be >= 0");
  p = Pool2dParam{};
  p.kh = 3;  // out would be 1 x 2
  test::expect_error([&] { op_pool2d(tile, p, in, imm_tsr(0, 0), out); }, "the pooling gives 1x1x2x8");
  p = Pool2dParam{};
  p.pad_top = 1;  // asymmetric: needs the padded copy
  const Tsr out3 = arena.tensor(Format::FP32, MemLayout::Tensor, Shape4{1, 2, 2, 8});
  test::expect_error([&] { op_pool2d(tile, p, in, imm_tsr(0, 16), out3); }, "imm holds 16 bytes");
  Tsr cx = in;
  cx.layout = MemLayout::Cx;
  test::expect_error([&] { op_pool2d(tile, Pool2dParam{}, cx, imm_tsr(0, 0), out); }, "in has layout Cx");
}

}  // namespace
}  // namespace tg::sim
