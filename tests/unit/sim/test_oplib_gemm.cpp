// op_gemm and op_conv2d (NE) against the core reference's mul_mat and conv_2d, with bias and
// activation post-processing, per input format (fp32, fp16, bf16; int8 exact), prime and edge
// sizes, and a GEMM split by rows over four tiles (each tile a slice of A, all of B).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "oplib_test_utils.h"
#include "tilegraph/sim/oplib/gemm.h"

namespace tg::sim {
namespace {

using namespace oplib;

// Relative tolerance of the output format, and an absolute one growing with the depth of the sum
// (f32 sums in a different order).
double gemm_abs(Format f, int64_t k) { return test::oplib_abs_tolerance(f) * std::sqrt(double(k)); }

std::vector<float> transposed(const std::vector<float>& x, int64_t rows, int64_t cols) {
  std::vector<float> t(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) t[size_t(c * rows + r)] = x[size_t(r * cols + c)];
  }
  return t;
}

void run_gemm(Format in_f, Format out_f, int64_t m, int64_t n, int64_t k, bool bt, bool bias, ne::Activation act,
              int tiles, test::Rng& rng) {
  const std::string what = std::string(format_name(in_f)) + "->" + std::string(format_name(out_f)) + " " +
                           std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + (bt ? " bT" : "") +
                           (bias ? " bias" : "") + " tiles " + std::to_string(tiles);
  SCOPED_TRACE(what);
  Chip chip(test::mesh(tiles == 1 ? 1 : 2, tiles == 1 ? 1 : 2));
  const uint64_t a_ddr = 0, b_ddr = 1 << 22, out_ddr = 1 << 24;
  const std::vector<float> a = test::ddr_put(chip, a_ddr, test::random_values(rng, m * k), in_f);
  const std::vector<float> b = test::ddr_put(chip, b_ddr, test::random_values(rng, k * n), in_f);  // [K][N] or [N][K]
  const std::vector<float> bias_v = test::random_values(rng, n);
  test::run_split(chip, tiles, {1, 1, m, k}, 2, [&](Tile& tile, GShape& range) {
    SpmArena arena(tile.spm().size());
    Tsr at{in_f, 0, MemLayout::Tensor, {}};
    at.shape.shape_slice = {1, 1, m, k};
    at.addr = arena.allocate(at.allocated_bytes());
    op_dma_load(tile, range, a_ddr, at);
    const Shape4 b_shape = bt ? Shape4{1, 1, n, k} : Shape4{1, 1, k, n};
    Tsr bt_tsr = arena.tensor(in_f, MemLayout::Tensor, b_shape, 2);
    GShape whole_b = GShape::range(b_shape, {0, 0, 0, 0}, dims_of(b_shape));
    op_dma_load(tile, whole_b, b_ddr, bt_tsr);
    const Tsr bias_t = test::put_constant(tile, arena, bias_v, {1, 1, 1, n});
    const int64_t rows = at.shape.shape_real[2];
    Tsr out = arena.tensor(out_f, MemLayout::Tensor, {1, 1, rows, n}, 2);
    out.shape.shape_whole = {1, 1, m, n};
    out.shape.shape_start = {0, 0, at.shape.shape_start[2], 0};
    EXPECT_GT(op_gemm(tile, {bt, false, act}, at, bt_tsr, bias ? &bias_t : nullptr, out), 0u);
    op_store_var(tile, out, out_ddr);
  });
  test::expect_no_hazards(chip);
  Context ctx;
  // mul_mat(W [K, N], X [K, M]) is [N, M]: out[m][n] row-major.
  Tensor* w = test::tensor_of(ctx, bt ? b : transposed(b, k, n), {k, n});
  Tensor* ref = mul_mat(ctx, w, test::tensor_of(ctx, a, {k, m}));
  if (bias) ref = add(ctx, ref, test::tensor_of(ctx, bias_v, {n}));
  if (act == ne::Activation::Relu) ref = relu(ctx, ref);
  if (act == ne::Activation::Silu) ref = silu(ctx, ref);
  test::expect_close(test::ddr_get(chip, out_ddr, m * n, out_f), test::reference_result(ref), out_f, what,
                     gemm_abs(out_f, k));
}

TEST(OplibGemm, MatchesReference) {
  test::Rng rng(51);
  for (Format f : test::kOplibFormats) {
    for (const auto& [m, n, k] :
         {std::tuple<int64_t, int64_t, int64_t>{1, 1, 1}, {7, 13, 31}, {33, 65, 129}, {64, 17, 256}}) {
      for (bool bt : {false, true}) {
        run_gemm(f, Format::FP32, m, n, k, bt, false, ne::Activation::None, 1, rng);
        run_gemm(f, f, m, n, k, bt, true, ne::Activation::Relu, 4, rng);
      }
    }
    run_gemm(f, Format::FP32, 5, 96, 40, true, true, ne::Activation::Silu, 4, rng);
  }
  run_gemm(Format::INT8, Format::INT32, 9, 11, 300, false, false, ne::Activation::None, 4, rng);
}

TEST(OplibGemm, CostIsTheNeInstructionsAndErrorsNameOperands) {
  const ChipConfig config = test::mesh(1, 1);
  EXPECT_EQ(gemm_cost(config, Format::BF16, 128, 256, 512).cycles,
            ne::gemm_cycles(config, Format::BF16, 128, 256, 512));
  EXPECT_EQ(gemm_cost(config, Format::BF16, 128, 256, 512).imm_bytes, 0u);
  Chip chip(config);
  SpmArena arena(chip.tile(0).spm().size());
  const Tsr a = arena.tensor(Format::BF16, MemLayout::Tensor, {1, 1, 4, 8}, 2);
  const Tsr b = arena.tensor(Format::BF16, MemLayout::Tensor, {1, 1, 9, 3}, 2);
  test::expect_error([&] { op_gemm(chip.tile(0), {}, a, b, nullptr, a); }, "op_gemm: a has K = 8, b has 9");
}

// NHWC [N][H][W][C] <-> the reference's [W, H, C, N] (memory [N][C][H][W]).
std::vector<float> nhwc_to_nchw(const std::vector<float>& x, const Shape4& s) {
  std::vector<float> out(x.size());
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t h = 0; h < s.h; ++h)
      for (int64_t w = 0; w < s.w; ++w)
        for (int64_t c = 0; c < s.c; ++c)
          out[size_t(((n * s.c + c) * s.h + h) * s.w + w)] = x[size_t(((n * s.h + h) * s.w + w) * s.c + c)];
  return out;
}

TEST(OplibConv2d, MatchesReference) {
  test::Rng rng(52);
  for (Format f : test::kOplibFormats) {
    for (const Conv2dParam& p : {Conv2dParam{}, Conv2dParam{2, 1, 1, 2, 1, 1, ne::Activation::Relu},
                                 Conv2dParam{1, 2, 0, 1, 2, 1, ne::Activation::None}}) {
      const Shape4 in_s{2, 7, 6, 5}, w_s{3, 2, 5, 11};  // weight KH x KW x Cin x Cout
      const Shape4 out_s = conv2d_out_shape(p, in_s, w_s);
      Chip chip(test::mesh(1, 1));
      Tile& tile = chip.tile(0);
      SpmArena arena(tile.spm().size());
      const Tsr in = arena.tensor(f, MemLayout::NTensor, in_s);
      const Tsr w = arena.tensor(f, MemLayout::NTensor, w_s);
      const Tsr out = arena.tensor(Format::FP32, MemLayout::NTensor, out_s);
      const std::vector<float> x = test::put(tile, in.addr, test::random_values(rng, in_s.elements()), f);
      const std::vector<float> wv = test::put(tile, w.addr, test::random_values(rng, w_s.elements()), f);
      const std::vector<float> bias_v = test::random_values(rng, w_s.c);
      const Tsr bias = test::put_constant(tile, arena, bias_v, {1, 1, 1, w_s.c});
      op_conv2d(tile, p, in, w, &bias, out);
      Context ctx;
      // weight [KH][KW][Cin][Cout] is the reference's kernel [KW, KH, Cin, Cout] in memory
      // [Cout][Cin][KH][KW]: the same permutation as NHWC -> NCHW with N = KH... done by hand.
      std::vector<float> kernel(wv.size());
      for (int64_t kh = 0; kh < w_s.n; ++kh)
        for (int64_t kw = 0; kw < w_s.h; ++kw)
          for (int64_t ci = 0; ci < w_s.w; ++ci)
            for (int64_t co = 0; co < w_s.c; ++co)
              kernel[size_t(((co * w_s.w + ci) * w_s.n + kh) * w_s.h + kw)] =
                  wv[size_t(((kh * w_s.h + kw) * w_s.w + ci) * w_s.c + co)];
      Tensor* ref = conv_2d(ctx, test::tensor_of(ctx, kernel, {w_s.h, w_s.n, w_s.w, w_s.c}),
                            test::tensor_of(ctx, nhwc_to_nchw(x, in_s), {in_s.w, in_s.h, in_s.c, in_s.n}),
                            Conv2dParams{p.stride_w, p.stride_h, p.pad_w, p.pad_h, p.dil_w, p.dil_h});
      std::vector<float> r = test::reference_result(ref);
      const std::vector<float> got = nhwc_to_nchw(test::get(tile, out.addr, out_s.elements(), Format::FP32), out_s);
      for (int64_t n = 0; n < out_s.n; ++n)
        for (int64_t c = 0; c < out_s.c; ++c)
          for (int64_t i = 0; i < out_s.h * out_s.w; ++i) {
            float& v = r[size_t((n * out_s.c + c) * out_s.h * out_s.w + i)];
            v += bias_v[size_t(c)];
            if (p.act == ne::Activation::Relu) v = std::max(v, 0.0f);
          }
      test::expect_close(got, r, Format::FP32, "conv2d " + std::string(format_name(f)), 1e-4);
      EXPECT_GT(conv2d_cost(test::mesh(1, 1), p, f, in_s, w_s).cycles, 0u);
    }
  }
}

}  // namespace
}  // namespace tg::sim

namespace tg::sim {
namespace {

// op_gemm_q8_0: a q8_0 weight as GGUF stores it, with bias and activation, against mul_mat (which
// rounds the activations to q8_32) followed by the same bias and activation.
TEST(OplibGemm, Q8_0WeightOnTheInt8PathMatchesTheReference) {
  test::Rng rng(31);
  const int64_t shapes[][3] = {{1, 1, 32}, {5, 17, 64}, {13, 64, 160}, {2, 129, 512}};
  for (const auto& s : shapes) {
    const int64_t m = s[0], n = s[1], k = s[2];
    SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k));
    Chip chip(test::mesh(1, 1));
    Tile& tile = chip.tile(0);
    const std::vector<float> w = test::random_values(rng, n * k, -1, 1);
    std::vector<BlockQ8_0> blocks(size_t(n * k / 32));
    quantize_row_q8_0(w.data(), blocks.data(), n * k);
    const std::vector<float> a = test::random_values(rng, m * k);
    const std::vector<float> bias_v = test::random_values(rng, n);
    SpmArena arena(tile.spm().size());
    Tsr at = arena.tensor(Format::FP32, MemLayout::Tensor, {1, 1, m, k}, 2);
    tile.spm().write(at.addr, a.data(), a.size() * sizeof(float));
    Tsr wt = arena.tensor(Format::INT8, MemLayout::Tensor, {1, 1, n, k / 32 * 34}, 2);
    tile.spm().write(wt.addr, blocks.data(), blocks.size() * sizeof(BlockQ8_0));
    const Tsr bias_t = test::put_constant(tile, arena, bias_v, {1, 1, 1, n});
    Tsr out = arena.tensor(Format::FP32, MemLayout::Tensor, {1, 1, m, n}, 2);
    EXPECT_GT(op_gemm_q8_0(tile, {.b_transposed = true, .act = ne::Activation::Silu}, at, wt, &bias_t, out), 0u);
    std::vector<float> got(size_t(m * n));
    tile.spm().read(out.addr, got.data(), got.size() * sizeof(float));

    Context ctx;
    Tensor* wq = ctx.new_tensor(DType::Q8_0, {k, n});
    std::memcpy(wq->data, blocks.data(), blocks.size() * sizeof(BlockQ8_0));
    Tensor* x = test::tensor_of(ctx, a, {k, m});
    Tensor* ref_t = unary(ctx, add(ctx, mul_mat(ctx, wq, x), test::tensor_of(ctx, bias_v, {n})), UnaryOp::SILU);
    const std::vector<float> ref = test::reference_result(ref_t);
    for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], ref[i], 1e-4 * (1 + std::fabs(ref[i]))) << i;
  }
  // A weight whose rows are not K/32 blocks of 34 bytes is refused, naming the sizes.
  Chip chip(test::mesh(1, 1));
  Tile& tile = chip.tile(0);
  SpmArena arena(tile.spm().size());
  Tsr at = arena.tensor(Format::FP32, MemLayout::Tensor, {1, 1, 1, 64}, 2);
  Tsr wt = arena.tensor(Format::INT8, MemLayout::Tensor, {1, 1, 4, 64}, 2);
  Tsr out = arena.tensor(Format::FP32, MemLayout::Tensor, {1, 1, 1, 4}, 2);
  try {
    op_gemm_q8_0(tile, {.b_transposed = true}, at, wt, nullptr, out);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("w rows are 64 bytes, K = 64 needs 68"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tg::sim
