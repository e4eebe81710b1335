// NE GEMM and convolution against the core reference's mul_mat and conv_2d on random shapes per
// input format, with each kind of post-processing; int8 exactly.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "sim_test_utils.h"
#include "tilegraph/core/dtype.h"
#include "tilegraph/sim/ne.h"

namespace tg::sim {
namespace {

using namespace ne;
using test::get;
using test::put;

ChipConfig one_tile() {
  ChipConfig c;
  c.mesh_x = c.mesh_y = 1;
  return c;
}

// A . B through the reference: mul_mat(Bt [N][K], A [M][K]) is the row-major M x N product.
std::vector<float> reference_gemm(const std::vector<float>& a, const std::vector<float>& b, int64_t m, int64_t n,
                                  int64_t k, bool b_transposed) {
  std::vector<float> bt(size_t(n * k));
  for (int64_t j = 0; j < n; ++j)
    for (int64_t l = 0; l < k; ++l) bt[size_t(j * k + l)] = b_transposed ? b[size_t(j * k + l)] : b[size_t(l * n + j)];
  Context ctx;
  return test::reference_result(mul_mat(ctx, test::tensor_of(ctx, bt, {k, n}), test::tensor_of(ctx, a, {k, m})));
}

// Results are f32 sums of K products: the tolerance scales with sum |a||b| of the row and column.
void expect_gemm_close(const std::vector<float>& out, const std::vector<float>& ref, double bound,
                       const std::string& what) {
  ASSERT_EQ(out.size(), ref.size());
  for (size_t i = 0; i < out.size(); ++i) ASSERT_NEAR(out[i], ref[i], bound) << what << " at " << i;
}

TEST(Ne, GemmMatchesReferencePerFormat) {
  Chip chip(one_tile());
  Tile& tile = chip.tile(0);
  test::Rng rng(11);
  const int64_t shapes[][3] = {{1, 1, 1}, {8, 8, 16}, {13, 29, 31}, {64, 33, 100}, {7, 130, 65}};
  for (Format f : {Format::FP32, Format::TF32, Format::FP16, Format::BF16}) {
    for (const auto& s : shapes) {
      for (bool bt : {false, true}) {
        const int64_t m = s[0], n = s[1], k = s[2];
        std::vector<float> a = put(tile, 0, test::random_values(rng, m * k, -1, 1), f);
        std::vector<float> b = put(tile, 1 << 20, test::random_values(rng, k * n, -1, 1), f);
        if (f == Format::TF32) {  // the NE rounds f32 inputs to 10 mantissa bits
          for (float& x : a) x = round_to(Format::TF32, x);
          for (float& x : b) x = round_to(Format::TF32, x);
        }
        const Gemm in{f, 0, 1 << 20, 2 << 20, m, n, k, bt};
        const uint64_t cycles = execute(tile, in);
        EXPECT_EQ(cycles, gemm_cycles(tile.config(), f, m, n, k));
        expect_gemm_close(
            get(tile, 2 << 20, m * n, Format::FP32), reference_gemm(a, b, m, n, k, bt), 1e-5 * double(k),
            instruction_name(in) + " " + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k));
      }
    }
  }
}

TEST(Ne, Int8GemmAccumulatesExactlyInInt32) {
  Chip chip(one_tile());
  Tile& tile = chip.tile(0);
  test::Rng rng(12);
  // K beyond 1024 crosses the exact-f32 block size of the host computation.
  const int64_t m = 5, n = 7, k = 2500;
  std::vector<float> a = test::random_values(rng, m * k, -128, 127), b = test::random_values(rng, k * n, -128, 127);
  for (float& x : a) x = std::round(x);
  for (float& x : b) x = std::round(x);
  put(tile, 0, a, Format::INT8);
  put(tile, 1 << 20, b, Format::INT8);
  Gemm in{Format::INT8, 0, 1 << 20, 2 << 20, m, n, k};
  in.post.out_format = Format::INT32;
  execute(tile, in);
  std::vector<uint8_t> raw(size_t(m * n) * 4);
  tile.spm().read(2 << 20, raw.data(), raw.size());
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      int64_t sum = 0;
      for (int64_t l = 0; l < k; ++l) sum += int64_t(a[size_t(i * k + l)]) * int64_t(b[size_t(l * n + j)]);
      int32_t got;
      std::memcpy(&got, raw.data() + (i * n + j) * 4, 4);
      ASSERT_EQ(got, sum) << i << "," << j;
    }
  }
  // Accumulating a second K block doubles it.
  in.accumulate = true;
  execute(tile, in);
  int32_t first, again;
  std::memcpy(&first, raw.data(), 4);
  tile.spm().read(2 << 20, &again, 4);
  EXPECT_EQ(again, 2 * first);
}

TEST(Ne, PostProcessingBiasBatchNormActivationAndQuantisation) {
  Chip chip(one_tile());
  Tile& tile = chip.tile(0);
  test::Rng rng(13);
  const int64_t m = 9, n = 20, k = 33;
  const std::vector<float> a = put(tile, 0, test::random_values(rng, m * k, -1, 1), Format::BF16);
  const std::vector<float> b = put(tile, 65536, test::random_values(rng, k * n, -1, 1), Format::BF16);
  const std::vector<float> bias = put(tile, 131072, test::random_values(rng, n), Format::FP32);
  const std::vector<float> scale = put(tile, 135168, test::random_values(rng, n, 0.5f, 1.5f), Format::FP32);
  const std::vector<float> shift = put(tile, 139264, test::random_values(rng, n), Format::FP32);
  const std::vector<float> acc = reference_gemm(a, b, m, n, k, false);
  Context ctx;
  Tensor* tacc = test::tensor_of(ctx, acc, {n, m});
  // bias + gelu, f16 out
  {
    Gemm in{Format::BF16, 0, 65536, 1 << 20, m, n, k};
    in.post.bias = 131072;
    in.post.act = Activation::Gelu;
    in.post.out_format = Format::FP16;
    execute(tile, in);
    const std::vector<float> ref = test::reference_result(gelu(ctx, add(ctx, tacc, test::tensor_of(ctx, bias, {n}))));
    test::expect_close(get(tile, 1 << 20, m * n, Format::FP16), ref, Format::FP16, "gemm bias gelu", 1e-4);
  }
  // folded batch norm + relu, bf16 out
  {
    Gemm in{Format::BF16, 0, 65536, 1 << 20, m, n, k};
    in.post.bn_scale = 135168;
    in.post.bn_shift = 139264;
    in.post.act = Activation::Relu;
    in.post.out_format = Format::BF16;
    execute(tile, in);
    Tensor* bn = add(ctx, mul(ctx, tacc, test::tensor_of(ctx, scale, {n})), test::tensor_of(ctx, shift, {n}));
    test::expect_close(get(tile, 1 << 20, m * n, Format::BF16), test::reference_result(relu(ctx, bn)), Format::BF16,
                       "gemm bn relu", 1e-4);
  }
  // int8 quantisation of the output: saturate(round(y * 40))
  {
    Gemm in{Format::BF16, 0, 65536, 1 << 20, m, n, k};
    in.post.out_format = Format::INT8;
    in.post.output_scale = 40.0f;
    execute(tile, in);
    const std::vector<float> got = get(tile, 1 << 20, m * n, Format::INT8);
    for (size_t i = 0; i < got.size(); ++i) {
      const float expect = std::clamp(std::nearbyint(acc[i] * 40.0f), -128.0f, 127.0f);
      ASSERT_NEAR(got[i], expect, 1.0f) << i;  // within one step: the f32 sums may differ in the last bit
    }
  }
}

TEST(Ne, ConvMatchesReference) {
  Chip chip(one_tile());
  Tile& tile = chip.tile(0);
  test::Rng rng(14);
  struct Case {
    int64_t n, h, w, cin, cout, kh, kw;
    int32_t s, p, d;
  };
  const Case cases[] = {{1, 5, 7, 3, 4, 3, 3, 1, 1, 1}, {2, 9, 8, 5, 6, 3, 2, 2, 0, 1}, {1, 8, 8, 2, 3, 3, 3, 1, 2, 2}};
  for (Format f : {Format::FP32, Format::FP16}) {
    for (const Case& c : cases) {
      const std::vector<float> x = put(tile, 0, test::random_values(rng, c.n * c.h * c.w * c.cin), f);
      const std::vector<float> wt = put(tile, 1 << 20, test::random_values(rng, c.kh * c.kw * c.cin * c.cout), f);
      Conv in{f, 0, 1 << 20, 2 << 20, c.n, c.h, c.w, c.cin, c.cout, c.kh, c.kw, c.s, c.s, c.p, c.p, c.d, c.d};
      execute(tile, in);
      // The reference convolves [W, H, Cin, N] with [KW, KH, Cin, Cout].
      std::vector<float> xr(x.size()), wr(wt.size());
      for (int64_t b = 0; b < c.n; ++b)
        for (int64_t y = 0; y < c.h; ++y)
          for (int64_t xx = 0; xx < c.w; ++xx)
            for (int64_t ch = 0; ch < c.cin; ++ch)
              xr[size_t(((b * c.cin + ch) * c.h + y) * c.w + xx)] = x[size_t(((b * c.h + y) * c.w + xx) * c.cin + ch)];
      for (int64_t ky = 0; ky < c.kh; ++ky)
        for (int64_t kx = 0; kx < c.kw; ++kx)
          for (int64_t ci = 0; ci < c.cin; ++ci)
            for (int64_t co = 0; co < c.cout; ++co)
              wr[size_t(((co * c.cin + ci) * c.kh + ky) * c.kw + kx)] =
                  wt[size_t(((ky * c.kw + kx) * c.cin + ci) * c.cout + co)];
      Context ctx;
      Conv2dParams p;
      p.s0 = p.s1 = c.s;
      p.p0 = p.p1 = c.p;
      p.d0 = p.d1 = c.d;
      Tensor* ref = conv_2d(ctx, test::tensor_of(ctx, wr, {c.kw, c.kh, c.cin, c.cout}),
                            test::tensor_of(ctx, xr, {c.w, c.h, c.cin, c.n}), p);
      const std::vector<float> r = test::reference_result(ref);
      const int64_t ow = ref->ne[0], oh = ref->ne[1];
      const std::vector<float> got = get(tile, 2 << 20, c.n * oh * ow * c.cout, Format::FP32);
      for (int64_t b = 0; b < c.n; ++b)
        for (int64_t y = 0; y < oh; ++y)
          for (int64_t xx = 0; xx < ow; ++xx)
            for (int64_t co = 0; co < c.cout; ++co)
              ASSERT_NEAR(got[size_t(((b * oh + y) * ow + xx) * c.cout + co)],
                          r[size_t(((b * c.cout + co) * oh + y) * ow + xx)], 1e-4)
                  << instruction_name(in);
    }
  }
}

TEST(Ne, CostFollowsTheStepCountAndFormatRate) {
  const ChipConfig c;
  // 64 x 64 x 64: 8 * 4 * 8 = 256 steps over 4 arrays.
  EXPECT_EQ(gemm_cycles(c, Format::BF16, 64, 64, 64), uint64_t(c.ne.latency_cycles) + 64);
  EXPECT_EQ(gemm_cycles(c, Format::INT8, 64, 64, 64), uint64_t(c.ne.latency_cycles) + 32);
  EXPECT_EQ(gemm_cycles(c, Format::FP32, 64, 64, 64), uint64_t(c.ne.latency_cycles) + 384);
  // Partial steps cost whole steps.
  EXPECT_EQ(gemm_cycles(c, Format::BF16, 1, 1, 1), gemm_cycles(c, Format::BF16, 8, 8, 16));
}

TEST(Ne, BadInstructionsNameThemselves) {
  Chip chip(one_tile());
  Tile& tile = chip.tile(0);
  put(tile, 0, std::vector<float>(64, 1.0f), Format::FP32);
  test::expect_error(
      [&] {
        execute(tile, Gemm{Format::INT32, 0, 0, 4096, 8, 8, 8});
      },
      "NE_Gemm.int32 on tile 0: unsupported format int32");
  Gemm bias_and_accumulate{Format::FP32, 0, 0, 4096, 4, 4, 4};
  bias_and_accumulate.accumulate = true;
  bias_and_accumulate.post.act = Activation::Relu;
  test::expect_error([&] { execute(tile, bias_and_accumulate); },
                     "NE_Gemm.fp32 on tile 0: accumulate sums into the raw fp32");
  test::expect_error(
      [&] {
        execute(tile, Gemm{Format::FP32, 0, 0, 4096, 8, 8, 9});
      },
      "NE_Gemm.fp32 on tile 0: reads SPM");
}

}  // namespace
}  // namespace tg::sim

namespace tg::sim {
namespace {

// A q8_0 weight [N][K] (row-major blocks) and f32 activations [M][K] through core's mul_mat, which
// rounds the activations to q8_32 and multiplies the dequantised weights: out[m][n].
struct Q8Case {
  std::vector<BlockQ8_0> w;
  std::vector<float> a, ref;
  std::vector<double> magnitude;  // sum |w||a| per output, for the tolerance
};

Q8Case q8_case(test::Rng& rng, int64_t m, int64_t n, int64_t k) {
  Q8Case c;
  const std::vector<float> w = test::random_values(rng, n * k, -1, 1);
  c.a = test::random_values(rng, m * k, -2, 2);
  c.w.resize(size_t(n * k / kQ8_0BlockSize));
  for (int64_t j = 0; j < n; ++j) quantize_row_q8_0(w.data() + j * k, c.w.data() + j * k / kQ8_0BlockSize, k);
  Context ctx;
  Tensor* wt = ctx.new_tensor(DType::Q8_0, {k, n});
  std::memcpy(wt->data, c.w.data(), c.w.size() * sizeof(BlockQ8_0));
  c.ref = test::reference_result(mul_mat(ctx, wt, test::tensor_of(ctx, c.a, {k, m})));
  std::vector<float> wd(size_t(n * k));
  row_to_f32(DType::Q8_0, c.w.data(), wd.data(), n * k);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t l = 0; l < k; ++l) s += std::fabs(double(wd[size_t(j * k + l)]) * c.a[size_t(i * k + l)]);
      c.magnitude.push_back(s);
    }
  }
  return c;
}

TEST(Ne, Q8_0GemmMatchesTheReferenceMulMat) {
  Chip chip(one_tile());
  Tile& tile = chip.tile(0);
  test::Rng rng(21);
  const int64_t shapes[][3] = {{1, 1, 32}, {1, 37, 64}, {7, 13, 96}, {8, 64, 256}, {31, 33, 1024}, {3, 5, 4128}};
  for (const auto& s : shapes) {
    const int64_t m = s[0], n = s[1], k = s[2];
    const Q8Case c = q8_case(rng, m, n, k);
    put(tile, 0, c.a, Format::FP32);
    tile.spm().write(1 << 20, c.w.data(), c.w.size() * sizeof(BlockQ8_0));
    const GemmQ8_0 in{0, 1 << 20, 3 << 20, m, n, k};
    EXPECT_EQ(execute(tile, in), gemm_cycles(tile.config(), Format::INT8, m, n, k));
    const std::vector<float> out = get(tile, 3 << 20, m * n, Format::FP32);
    for (size_t i = 0; i < out.size(); ++i) {
      // Per block the int8 sums are exact; the blocks' scaled sums add in f32 (the reference in
      // double): within f32 rounding of the magnitude.
      ASSERT_NEAR(out[i], c.ref[i], 4e-7 * double(k / 32) * c.magnitude[i] + 1e-30)
          << m << "x" << n << "x" << k << " at " << i;
    }
  }
}

TEST(Ne, Q8_0GemmRefusesKThatIsNotWholeBlocks) {
  Chip chip(one_tile());
  Tile& tile = chip.tile(0);
  put(tile, 0, std::vector<float>(40, 1.0f), Format::FP32);
  tile.spm().write(1 << 20, std::vector<uint8_t>(68, 0).data(), 68);
  EXPECT_THROW(execute(tile, GemmQ8_0{0, 1 << 20, 3 << 20, 1, 1, 40}), Error);
}

}  // namespace
}  // namespace tg::sim
