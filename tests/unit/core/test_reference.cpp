// The reference implementation against values worked out by hand, plus the property that matters
// most for an oracle: the answer depends only on the logical content of the inputs, never on how
// they are laid out in memory.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <numbers>
#include <string>
#include <vector>

#include "common/tensor_utils.h"
#include "tilegraph/backends.h"
#include "tilegraph/core/context.h"
#include "tilegraph/core/error.h"
#include "tilegraph/core/graph.h"
#include "tilegraph/core/ops.h"
#include "tilegraph/core/quant.h"
#include "tilegraph/core/reference.h"

namespace tg {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

Tensor* make(Context& ctx, DType type, std::array<int64_t, 4> ne, const std::vector<float>& values) {
  Tensor* t = ctx.new_tensor(type, ne);
  test::write_f32(*t, values);
  return t;
}

Tensor* make_f32(Context& ctx, std::array<int64_t, 4> ne, const std::vector<float>& values) {
  return make(ctx, DType::F32, ne, values);
}

Tensor* make_i32(Context& ctx, std::array<int64_t, 4> ne, const std::vector<int32_t>& values) {
  Tensor* t = ctx.new_tensor(DType::I32, ne);
  for (size_t i = 0; i < values.size(); ++i) static_cast<int32_t*>(t->data)[i] = values[i];
  return t;
}

std::vector<float> run(Tensor* node) {
  reference::compute_node(*node);
  return test::read_f32(*node);
}

std::vector<int32_t> read_i32(const Tensor& t) {
  const auto* p = static_cast<const int32_t*>(t.data);
  return std::vector<int32_t>(p, p + t.nelements());
}

void expect_near(const std::vector<float>& actual, const std::vector<float>& expected, float tolerance = 1e-6f) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    EXPECT_NEAR(actual[i], expected[i], tolerance) << "at " << i;
  }
}

TEST(Reference, BackendRefusesAHandBuiltNodeWithoutItsSources) {
  Context ctx;
  Tensor* a = ctx.new_tensor(DType::F32, {4});
  Tensor* sum = add(ctx, a, a);
  sum->src[1] = nullptr;
  try {
    make_backend("reference")->compute(Graph::build(sum));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("src[1] is missing"), std::string::npos) << e.what();
  }
}

TEST(Reference, MulMatTwoByThreeByHand) {
  Context ctx;
  // a rows (K=3): [1 2 3], [4 5 6]; b rows: [1 0 -1], [2 1 0]; r[m, n] = a_m . b_n.
  Tensor* a = make_f32(ctx, {3, 2, 1, 1}, {1, 2, 3, 4, 5, 6});
  Tensor* b = make_f32(ctx, {3, 2, 1, 1}, {1, 0, -1, 2, 1, 0});
  EXPECT_EQ(run(mul_mat(ctx, a, b)), (std::vector<float>{-2, -2, 4, 13}));
}

TEST(Reference, MulMatBroadcastsAOverBatches) {
  Context ctx;
  Tensor* a = make_f32(ctx, {2, 1, 1, 1}, {1, 10});
  Tensor* b = make_f32(ctx, {2, 1, 3, 1}, {1, 1, 2, 0, 0, 3});
  EXPECT_EQ(run(mul_mat(ctx, a, b)), (std::vector<float>{11, 2, 30}));
}

TEST(Reference, MulMatOfQuantizedTypesTakesActivationsRoundedToEightBits) {
  for (DType type :
       {DType::Q8_0, DType::Q4_K, DType::Q5_K, DType::Q6_K, DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1}) {
    Context ctx;
    test::Rng rng(8);
    Tensor* a = ctx.new_tensor(type, {512, 3});
    Tensor* b = ctx.new_tensor(DType::F32, {512, 2});
    test::fill_uniform(*a, rng);
    test::fill_uniform(*b, rng);
    Tensor* a_f32 = make_f32(ctx, {512, 3, 1, 1}, test::read_f32(*a));
    std::vector<float> rounded = test::read_f32(*b);
    round_activations(type, rounded.data(), int64_t(rounded.size()));
    Tensor* b_rounded = make_f32(ctx, {512, 2, 1, 1}, rounded);
    const std::vector<float> got = run(mul_mat(ctx, a, b));
    EXPECT_EQ(got, run(mul_mat(ctx, a_f32, b_rounded))) << dtype_name(type);
    EXPECT_NE(got, run(mul_mat(ctx, a_f32, b))) << dtype_name(type) << ": b was not rounded";
  }
}

TEST(Reference, BinaryOpsBroadcastB) {
  Context ctx;
  Tensor* a = make_f32(ctx, {3, 2, 1, 1}, {1, 2, 3, 4, 5, 6});
  Tensor* row = make_f32(ctx, {3, 1, 1, 1}, {1, 2, 4});
  Tensor* column = make_f32(ctx, {1, 2, 1, 1}, {10, 20});
  EXPECT_EQ(run(add(ctx, a, row)), (std::vector<float>{2, 4, 7, 5, 7, 10}));
  EXPECT_EQ(run(sub(ctx, a, column)), (std::vector<float>{-9, -8, -7, -16, -15, -14}));
  EXPECT_EQ(run(mul(ctx, a, row)), (std::vector<float>{1, 4, 12, 4, 10, 24}));
  EXPECT_EQ(run(div(ctx, a, row)), (std::vector<float>{1, 1, 0.75f, 4, 2.5f, 1.5f}));
}

TEST(Reference, ResultKeepsTypeOfAWithRoundToNearestEven) {
  Context ctx;
  Tensor* a = make(ctx, DType::F16, {2, 1, 1, 1}, {1, 1});
  // 2^-11 is half an f16 ulp at 1: ties round to the even mantissa (1.0); 3 * 2^-11 rounds up.
  Tensor* b = make_f32(ctx, {2, 1, 1, 1}, {0x1p-11f, 0x3p-11f});
  Tensor* r = add(ctx, a, b);
  EXPECT_EQ(r->type, DType::F16);
  EXPECT_EQ(run(r), (std::vector<float>{1.0f, 1.0f + 0x1p-9f}));
}

TEST(Reference, Scale) {
  Context ctx;
  Tensor* a = make_f32(ctx, {3, 1, 1, 1}, {1, -2, 0.5f});
  EXPECT_EQ(run(scale(ctx, a, 2.0f, 1.0f)), (std::vector<float>{3, -3, 2}));
}

TEST(Reference, UnaryFunctionsAtKnownPoints) {
  using reference::unary;
  EXPECT_EQ(unary(UnaryOp::RELU, -1.5f), 0.0f);
  EXPECT_EQ(unary(UnaryOp::RELU, 2.5f), 2.5f);
  EXPECT_NEAR(unary(UnaryOp::GELU, 1.0f), 0.8411920f, 1e-6f);
  EXPECT_NEAR(unary(UnaryOp::GELU, -2.0f), -0.0454023f, 1e-6f);
  EXPECT_NEAR(unary(UnaryOp::GELU_ERF, 1.0f), 0.8413447f, 1e-6f);
  EXPECT_NEAR(unary(UnaryOp::GELU_ERF, -2.0f), -0.0455003f, 1e-6f);
  EXPECT_NEAR(unary(UnaryOp::SILU, 1.0f), 0.7310586f, 1e-6f);
  EXPECT_EQ(unary(UnaryOp::SILU, -200.0f), 0.0f);  // no NaN when exp(-x) overflows
  EXPECT_EQ(unary(UnaryOp::SIGMOID, 0.0f), 0.5f);
  EXPECT_NEAR(unary(UnaryOp::TANH, 0.5f), 0.4621172f, 1e-6f);
  EXPECT_NEAR(unary(UnaryOp::EXP, 1.0f), std::numbers::e_v<float>, 1e-6f);
  EXPECT_EQ(unary(UnaryOp::NEG, 3.0f), -3.0f);
  EXPECT_EQ(unary(UnaryOp::ABS, -3.0f), 3.0f);
  EXPECT_EQ(unary(UnaryOp::SQRT, 6.25f), 2.5f);
  EXPECT_EQ(unary(UnaryOp::RSQRT, 4.0f), 0.5f);
  EXPECT_EQ(reference::gelu_tanh(1.0f), unary(UnaryOp::GELU, 1.0f));
  EXPECT_EQ(reference::silu(1.0f), unary(UnaryOp::SILU, 1.0f));
  EXPECT_THROW(unary(UnaryOp(kUnaryOpCount), 1.0f), Error);
}

TEST(Reference, UnaryNodeAppliesTheScalarFunction) {
  Context ctx;
  Tensor* a = make_f32(ctx, {4, 1, 1, 1}, {-1, 0, 1, 2});
  EXPECT_EQ(run(silu(ctx, a)), (std::vector<float>{reference::silu(-1), 0, reference::silu(1), reference::silu(2)}));
  EXPECT_EQ(run(relu(ctx, a)), (std::vector<float>{0, 0, 1, 2}));
}

TEST(Reference, GluFusedSwappedAndSplit) {
  Context ctx;
  using reference::gelu_tanh;
  using reference::silu;
  Tensor* a = make_f32(ctx, {4, 1, 1, 1}, {1, 2, 3, 4});  // x = [1 2], g = [3 4]
  EXPECT_EQ(run(glu(ctx, a, GluOp::SWIGLU)), (std::vector<float>{silu(1) * 3, silu(2) * 4}));
  EXPECT_EQ(run(glu(ctx, a, GluOp::SWIGLU, true)), (std::vector<float>{silu(3) * 1, silu(4) * 2}));
  EXPECT_EQ(run(glu(ctx, a, GluOp::GEGLU)), (std::vector<float>{gelu_tanh(1) * 3, gelu_tanh(2) * 4}));
  Tensor* x = make_f32(ctx, {2, 1, 1, 1}, {1, 2});
  Tensor* g = make_f32(ctx, {2, 1, 1, 1}, {3, 4});
  EXPECT_EQ(run(swiglu(ctx, x, g)), (std::vector<float>{silu(1) * 3, silu(2) * 4}));
}

TEST(Reference, NormAndRmsNorm) {
  Context ctx;
  Tensor* a = make_f32(ctx, {4, 1, 1, 1}, {1, 2, 3, 4});
  // mean 2.5, variance 1.25
  const float inv_std = 1.0f / std::sqrt(1.25f + 0.01f);
  expect_near(run(norm(ctx, a, 0.01f)), {-1.5f * inv_std, -0.5f * inv_std, 0.5f * inv_std, 1.5f * inv_std});
  Tensor* b = make_f32(ctx, {2, 1, 1, 1}, {3, 4});
  // mean of squares 12.5
  expect_near(run(rms_norm(ctx, b, 0.0f)), {3 / std::sqrt(12.5f), 4 / std::sqrt(12.5f)});
}

TEST(Reference, SoftMaxKnownValues) {
  Context ctx;
  Tensor* a = make_f32(ctx, {3, 1, 1, 1}, {1, 2, 3});
  expect_near(run(soft_max(ctx, a)), {0.09003057f, 0.24472847f, 0.66524096f});
  // scale 2 and a mask hiding the middle column: softmax([2, 6]) over columns 0 and 2.
  Tensor* mask = make(ctx, DType::F16, {3, 1, 1, 1}, {0, -kInf, 0});
  expect_near(run(soft_max(ctx, a, mask, 2.0f)), {0.01798621f, 0.0f, 0.98201379f});
}

TEST(Reference, SoftMaxFullyMaskedRowIsZero) {
  Context ctx;
  Tensor* a = make_f32(ctx, {2, 2, 1, 1}, {1, 2, 3, 4});
  Tensor* mask = make_f32(ctx, {2, 2, 1, 1}, {-kInf, -kInf, 0, 0});
  const std::vector<float> r = run(soft_max(ctx, a, mask));
  EXPECT_EQ(r[0], 0.0f);
  EXPECT_EQ(r[1], 0.0f);
  EXPECT_NEAR(r[2] + r[3], 1.0f, 1e-6f);
}

// With a zero input and mask [0, 1], softmax gives [1, e^s] / (1 + e^s), so s = log(r1 / r0).
std::vector<float> alibi_slopes_through_soft_max(int64_t n_head, float max_bias) {
  Context ctx;
  Tensor* a = make_f32(ctx, {2, 1, n_head, 1}, std::vector<float>(size_t(2 * n_head), 0.0f));
  Tensor* mask = make_f32(ctx, {2, 1, 1, 1}, {0, 1});
  const std::vector<float> r = run(soft_max(ctx, a, mask, 1.0f, max_bias));
  std::vector<float> slopes;
  for (int64_t h = 0; h < n_head; ++h) slopes.push_back(std::log(r[2 * h + 1] / r[2 * h]));
  return slopes;
}

TEST(Reference, AlibiSlopesForEightHeads) {
  // n_head_log2 = 8, m0 = 2^(-8/8): slope_h = 2^-(h+1).
  std::vector<float> expected;
  for (int h = 0; h < 8; ++h) expected.push_back(std::ldexp(1.0f, -(h + 1)));
  expect_near(alibi_slopes_through_soft_max(8, 8.0f), expected, 1e-6f);
}

TEST(Reference, AlibiSlopesForTwelveHeads) {
  // n_head_log2 = 8; heads 8..11 use m1 = 2^(-4/8) with odd powers 1, 3, 5, 7.
  std::vector<float> expected;
  for (int h = 0; h < 8; ++h) expected.push_back(std::ldexp(1.0f, -(h + 1)));
  for (int j = 0; j < 4; ++j) expected.push_back(std::pow(2.0f, -0.5f * float(2 * j + 1)));
  expect_near(alibi_slopes_through_soft_max(12, 8.0f), expected, 1e-6f);
}

Tensor* rope_input(Context& ctx, int32_t pos, Tensor** pos_out) {
  *pos_out = make_i32(ctx, {1, 1, 1, 1}, {pos});
  return make_f32(ctx, {6, 1, 1, 1}, {1, 2, 3, 4, 5, 6});
}

TEST(Reference, RopeAtPositionZeroIsIdentity) {
  for (RopeMode mode : {RopeMode::NORMAL, RopeMode::NEOX}) {
    Context ctx;
    Tensor* pos;
    Tensor* a = rope_input(ctx, 0, &pos);
    RopeParams p;
    p.n_dims = 4;
    p.mode = mode;
    EXPECT_EQ(run(rope(ctx, a, pos, p)), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  }
}

TEST(Reference, RopeRotatesByTheKnownAngle) {
  // n_dims 4, base 100, position 3: pair 0 turns by 3 rad, pair 1 by 3 * 100^(-1/2) = 0.3.
  RopeParams p;
  p.n_dims = 4;
  p.freq_base = 100.0f;
  const float c0 = std::cos(3.0f), s0 = std::sin(3.0f), c1 = std::cos(0.3f), s1 = std::sin(0.3f);
  {
    Context ctx;
    Tensor* pos;
    Tensor* a = rope_input(ctx, 3, &pos);
    p.mode = RopeMode::NORMAL;  // pairs (0,1), (2,3)
    expect_near(run(rope(ctx, a, pos, p)), {1 * c0 - 2 * s0, 1 * s0 + 2 * c0, 3 * c1 - 4 * s1, 3 * s1 + 4 * c1, 5, 6},
                1e-5f);
  }
  {
    Context ctx;
    Tensor* pos;
    Tensor* a = rope_input(ctx, 3, &pos);
    p.mode = RopeMode::NEOX;  // pairs (0,2), (1,3)
    expect_near(run(rope(ctx, a, pos, p)), {1 * c0 - 3 * s0, 2 * c1 - 4 * s1, 1 * s0 + 3 * c0, 2 * s1 + 4 * c1, 5, 6},
                1e-5f);
  }
}

TEST(Reference, RopeUsesPositionPerTokenAndFreqFactorsDivideFrequencies) {
  Context ctx;
  RopeParams p;
  p.n_dims = 4;
  // Two tokens at positions 6 and 2; halving every frequency turns 6 into an effective 3.
  Tensor* a = make_f32(ctx, {4, 1, 2, 1}, {1, 2, 3, 4, 1, 2, 3, 4});
  Tensor* pos = make_i32(ctx, {2, 1, 1, 1}, {6, 2});
  Tensor* factors = make_f32(ctx, {2, 1, 1, 1}, {2, 2});
  const std::vector<float> scaled = run(rope(ctx, a, pos, p, factors));
  Tensor* pos_plain = make_i32(ctx, {2, 1, 1, 1}, {3, 1});
  const std::vector<float> plain = run(rope(ctx, a, pos_plain, p));
  expect_near(scaled, plain, 1e-5f);
  EXPECT_NE(plain[0], plain[4]);  // the two tokens really got different angles
}

TEST(Reference, RopeYarnRampAndMagnitudeScale) {
  // n_dims 64, n_ctx_orig 4096, base 10000, beta_fast 32, beta_slow 1: the correction dims are
  // floor(64 ln(4096 / (32 * 2 pi)) / (2 ln 10000)) = floor(10.47) = 10 and ceil(22.52) = 23.
  // With ext_factor 1, pairs <= 10 extrapolate (theta = p * f), pairs >= 23 interpolate (theta =
  // freq_scale * p * f) and pair 16 mixes them with ramp (23 - 16) / 13.
  Context ctx;
  RopeParams p;
  p.n_dims = 64;
  p.n_ctx_orig = 4096;
  p.freq_scale = 0.25f;
  p.ext_factor = 1.0f;
  p.attn_factor = 1.5f;
  std::vector<float> ones(64);
  for (size_t i = 0; i < ones.size(); i += 2) ones[i] = 1.0f;  // x0 = 1, x1 = 0 in every pair
  Tensor* a = make_f32(ctx, {64, 1, 1, 1}, ones);
  const int32_t position = 5;
  Tensor* pos = make_i32(ctx, {1, 1, 1, 1}, {position});
  const std::vector<float> r = run(rope(ctx, a, pos, p));
  const double mscale = 1.5 * (1.0 + 0.1 * std::log(4.0));
  auto check_pair = [&](int i, double theta) {
    EXPECT_NEAR(r[2 * i], std::cos(theta) * mscale, 1e-5) << "pair " << i;
    EXPECT_NEAR(r[2 * i + 1], std::sin(theta) * mscale, 1e-5) << "pair " << i;
  };
  auto extrap = [&](int i) { return position * std::pow(10000.0, -2.0 * i / 64); };
  check_pair(0, extrap(0));
  check_pair(10, extrap(10));
  check_pair(23, 0.25 * extrap(23));
  check_pair(31, 0.25 * extrap(31));
  const double mix = 7.0 / 13.0;
  check_pair(16, 0.25 * extrap(16) * (1 - mix) + extrap(16) * mix);
}

TEST(Reference, GetRowsGathersAndKeepsIntegersExact) {
  Context ctx;
  Tensor* a = make(ctx, DType::F16, {2, 3, 1, 1}, {1, 2, 3, 4, 5, 6});
  Tensor* idx = make_i32(ctx, {3, 1, 1, 1}, {2, 0, 2});
  Tensor* r = get_rows(ctx, a, idx);
  EXPECT_EQ(r->type, DType::F32);
  EXPECT_EQ(run(r), (std::vector<float>{5, 6, 1, 2, 5, 6}));

  Tensor* ints = make_i32(ctx, {1, 2, 1, 1}, {16777217, -7});  // 2^24 + 1 is not a float
  Tensor* ri = get_rows(ctx, ints, make_i32(ctx, {1, 1, 1, 1}, {0}));
  reference::compute_node(*ri);
  EXPECT_EQ(read_i32(*ri), (std::vector<int32_t>{16777217}));
}

TEST(Reference, GetRowsIndexesPerBatch) {
  Context ctx;
  // a has two matrices of two rows; idx row j selects within matrix j.
  Tensor* a = make_f32(ctx, {1, 2, 2, 1}, {10, 11, 20, 21});
  Tensor* idx = make_i32(ctx, {1, 2, 1, 1}, {1, 0});
  EXPECT_EQ(run(get_rows(ctx, a, idx)), (std::vector<float>{11, 20}));
}

TEST(Reference, GetRowsOutOfRangeThrowsWithIndexAndBound) {
  Context ctx;
  Tensor* a = make_f32(ctx, {2, 3, 1, 1}, {1, 2, 3, 4, 5, 6});
  for (int32_t bad : {3, -1}) {
    Tensor* r = get_rows(ctx, a, make_i32(ctx, {2, 1, 1, 1}, {0, bad}));
    try {
      reference::compute_node(*r);
      ADD_FAILURE() << "no error for index " << bad;
    } catch (const Error& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find("get_rows"), std::string::npos) << message;
      EXPECT_NE(message.find("index " + std::to_string(bad)), std::string::npos) << message;
      EXPECT_NE(message.find("[0, 3)"), std::string::npos) << message;
    }
  }
}

TEST(Reference, SetRowsWritesIntoDstAndLeavesOtherRows) {
  Context ctx;
  Tensor* dst = make(ctx, DType::F16, {2, 4, 1, 1}, {0, 0, 1, 1, 2, 2, 3, 3});
  Tensor* src = make_f32(ctx, {2, 2, 1, 1}, {10, 11, 20, 21});
  Tensor* idx = make_i32(ctx, {2, 1, 1, 1}, {3, 0});
  Tensor* r = set_rows(ctx, dst, src, idx);
  reference::compute_node(*r);
  EXPECT_EQ(test::read_f32(*dst), (std::vector<float>{20, 21, 1, 1, 2, 2, 10, 11}));

  Tensor* bad = set_rows(ctx, dst, src, make_i32(ctx, {2, 1, 1, 1}, {0, 4}));
  EXPECT_THROW(reference::compute_node(*bad), Error);
}

TEST(Reference, SetRowsBroadcastsIndicesOverBatches) {
  Context ctx;
  Tensor* dst = make_f32(ctx, {1, 2, 2, 1}, {0, 0, 0, 0});
  Tensor* src = make_f32(ctx, {1, 1, 2, 1}, {5, 6});
  Tensor* idx = make_i32(ctx, {1, 1, 1, 1}, {1});  // the same row index for both matrices
  reference::compute_node(*set_rows(ctx, dst, src, idx));
  EXPECT_EQ(test::read_f32(*dst), (std::vector<float>{0, 5, 0, 6}));
}

TEST(Reference, SetRowsQuantizesIntoQ8_0) {
  Context ctx;
  test::Rng rng(3);
  Tensor* dst = ctx.new_tensor(DType::Q8_0, {32, 2});
  test::fill_uniform(*dst, rng);
  const std::vector<float> before = test::read_f32(*dst);
  Tensor* src = ctx.new_tensor(DType::F32, {32, 1});
  test::fill_uniform(*src, rng);
  reference::compute_node(*set_rows(ctx, dst, src, make_i32(ctx, {1, 1, 1, 1}, {1})));
  BlockQ8_0 expected;
  quantize_row_q8_0(static_cast<const float*>(src->data), &expected, 32);
  EXPECT_EQ(std::memcmp(static_cast<char*>(dst->data) + sizeof(BlockQ8_0), &expected, sizeof expected), 0);
  const std::vector<float> after = test::read_f32(*dst);
  EXPECT_TRUE(std::equal(before.begin(), before.begin() + 32, after.begin()));
}

TEST(Reference, CpyConvertsInLogicalOrderAcrossShapes) {
  Context ctx;
  Tensor* a = make_f32(ctx, {3, 2, 1, 1}, {1, 2, 3, 4, 5, 0.1f});
  Tensor* b = ctx.new_tensor(DType::F16, {2, 3});
  reference::compute_node(*cpy(ctx, a, b));
  EXPECT_EQ(test::read_f32(*b), (std::vector<float>{1, 2, 3, 4, 5, f16_to_f32(f32_to_f16(0.1f))}));

  // Into a transposed view: element (i0, i1) of the view is b2[i1, i0].
  Tensor* b2 = ctx.new_tensor(DType::F32, {2, 3});
  reference::compute_node(*cpy(ctx, a, transpose(ctx, b2)));
  EXPECT_EQ(test::read_f32(*b2), (std::vector<float>{1, 4, 2, 5, 3, 0.1f}));
}

TEST(Reference, CpyQ8_0AndI32) {
  Context ctx;
  test::Rng rng(11);
  Tensor* x = ctx.new_tensor(DType::F32, {64, 1});
  test::fill_uniform(*x, rng);
  Tensor* q = ctx.new_tensor(DType::Q8_0, {32, 2});
  reference::compute_node(*cpy(ctx, x, q));
  std::vector<BlockQ8_0> expected(2);
  quantize_row_q8_0(static_cast<const float*>(x->data), expected.data(), 64);
  EXPECT_EQ(std::memcmp(q->data, expected.data(), 2 * sizeof(BlockQ8_0)), 0);

  Tensor* back = ctx.new_tensor(DType::F32, {64});
  reference::compute_node(*cpy(ctx, q, back));
  std::vector<float> dequantized(64);
  dequantize_row_q8_0(expected.data(), dequantized.data(), 64);
  EXPECT_EQ(test::read_f32(*back), dequantized);

  Tensor* q_copy = ctx.new_tensor(DType::Q8_0, {64});
  reference::compute_node(*cpy(ctx, q, q_copy));
  EXPECT_EQ(std::memcmp(q_copy->data, expected.data(), 2 * sizeof(BlockQ8_0)), 0);

  Tensor* ints = make_i32(ctx, {2, 1, 1, 1}, {16777217, -16777219});
  Tensor* ints_copy = ctx.new_tensor(DType::I32, {1, 2});
  reference::compute_node(*cpy(ctx, ints, ints_copy));
  EXPECT_EQ(read_i32(*ints_copy), (std::vector<int32_t>{16777217, -16777219}));
}

TEST(Reference, ContOfPermutedView) {
  Context ctx;
  Tensor* a = make_f32(ctx, {2, 3, 1, 1}, {1, 2, 3, 4, 5, 6});
  Tensor* c = cont(ctx, transpose(ctx, a));
  EXPECT_TRUE(c->is_contiguous());
  EXPECT_EQ(run(c), (std::vector<float>{1, 3, 5, 2, 4, 6}));
}

TEST(Reference, FlashAttnTwoTokensByHand) {
  Context ctx;
  // One query [1 0]; keys [1 0] and [0 1]; values [1 2] and [3 4]; scale 1: scores [1, 0].
  Tensor* q = make_f32(ctx, {2, 1, 1, 1}, {1, 0});
  Tensor* k = make_f32(ctx, {2, 2, 1, 1}, {1, 0, 0, 1});
  Tensor* v = make_f32(ctx, {2, 2, 1, 1}, {1, 2, 3, 4});
  const float e = std::numbers::e_v<float>;
  const float p0 = e / (e + 1), p1 = 1 / (e + 1);
  expect_near(run(flash_attn_ext(ctx, q, k, v, nullptr, 1.0f)), {p0 * 1 + p1 * 3, p0 * 2 + p1 * 4});

  Tensor* hide_second = make(ctx, DType::F16, {2, 1, 1, 1}, {0, -kInf});
  expect_near(run(flash_attn_ext(ctx, q, k, v, hide_second, 1.0f)), {1, 2});
  Tensor* hide_all = make_f32(ctx, {2, 1, 1, 1}, {-kInf, -kInf});
  EXPECT_EQ(run(flash_attn_ext(ctx, q, k, v, hide_all, 1.0f)), (std::vector<float>{0, 0}));

  // softcap 0.5 with scale 2: s = 0.5 tanh(2 s / 0.5) -> [0.5 tanh(4), 0].
  const float s0 = 0.5f * std::tanh(4.0f);
  const float c0 = std::exp(s0) / (std::exp(s0) + 1), c1 = 1 / (std::exp(s0) + 1);
  expect_near(run(flash_attn_ext(ctx, q, k, v, nullptr, 2.0f, 0.0f, 0.5f)), {c0 * 1 + c1 * 3, c0 * 2 + c1 * 4});
}

TEST(Reference, FlashAttnGroupedHeadsAndOutputLayout) {
  Context ctx;
  // Four query heads share two kv heads (heads 0,1 -> kv 0; heads 2,3 -> kv 1). With one key per
  // kv head the softmax is 1, so each output row is its kv head's value; two queries per head.
  Tensor* q = make_f32(ctx, {1, 2, 4, 1}, std::vector<float>(8, 1.0f));
  Tensor* k = make_f32(ctx, {1, 1, 2, 1}, {1, 1});
  Tensor* v = make_f32(ctx, {2, 1, 2, 1}, {10, 11, 20, 21});
  Tensor* r = flash_attn_ext(ctx, q, k, v, nullptr, 1.0f);
  EXPECT_EQ(r->ne[1], 4);  // heads before queries
  EXPECT_EQ(r->ne[2], 2);
  const std::vector<float> per_query = {10, 11, 10, 11, 20, 21, 20, 21};
  std::vector<float> expected = per_query;
  expected.insert(expected.end(), per_query.begin(), per_query.end());
  EXPECT_EQ(run(r), expected);
}

TEST(Reference, FlashAttnEqualsSoftMaxOfKqTimesV) {
  // The same attention spelled with mul_mat, soft_max (mask + ALiBi) and a second mul_mat.
  Context ctx;
  test::Rng rng(5);
  const int64_t d = 8, n_q = 3, n_kv = 5, heads = 4;
  Tensor* q = ctx.new_tensor(DType::F32, {d, n_q, heads, 1});
  Tensor* k = ctx.new_tensor(DType::F32, {d, n_kv, heads, 1});
  Tensor* v = ctx.new_tensor(DType::F32, {d, n_kv, heads, 1});
  Tensor* mask = ctx.new_tensor(DType::F32, {n_kv, n_q, 1, 1});
  for (Tensor* t : {q, k, v, mask}) test::fill_uniform(*t, rng);
  static_cast<float*>(mask->data)[1] = -kInf;
  const float scale = 0.35f, max_bias = 4.0f;

  Tensor* fa = flash_attn_ext(ctx, q, k, v, mask, scale, max_bias);
  Tensor* kq = soft_max(ctx, mul_mat(ctx, k, q), mask, scale, max_bias);  // [n_kv, n_q, H]
  Tensor* kqv = mul_mat(ctx, cont(ctx, transpose(ctx, v)), kq);           // [d, n_q, H]
  Tensor* expected = cont(ctx, permute(ctx, kqv, 0, 2, 1, 3));            // [d, H, n_q]
  reference::compute_graph(Graph::build(expected));
  const std::vector<float> want = test::read_f32(*expected);
  const std::vector<float> got = run(fa);
  EXPECT_LT(test::nmse(got, want), 1e-12) << test::describe_difference(got, want);
}

TEST(Reference, SumRowsAndArgmax) {
  Context ctx;
  Tensor* a = make_f32(ctx, {3, 2, 1, 1}, {1, 5, 5, -1, -3, -2});
  EXPECT_EQ(run(sum_rows(ctx, a)), (std::vector<float>{11, -6}));
  Tensor* r = argmax(ctx, a);
  reference::compute_node(*r);
  EXPECT_EQ(read_i32(*r), (std::vector<int32_t>{1, 0}));  // ties go to the first maximum
}

TEST(Reference, BatchNormPerChannel) {
  Context ctx;
  // [W=2, H=1, C=2, N=1]
  Tensor* x = make_f32(ctx, {2, 1, 2, 1}, {1, 3, 10, 20});
  Tensor* mean = make_f32(ctx, {2, 1, 1, 1}, {2, 10});
  Tensor* var = make_f32(ctx, {2, 1, 1, 1}, {4, 100});
  Tensor* gamma = make_f32(ctx, {2, 1, 1, 1}, {3, 1});
  Tensor* beta = make_f32(ctx, {2, 1, 1, 1}, {1, -1});
  expect_near(run(batch_norm(ctx, x, mean, var, nullptr, nullptr, 0.0f)), {-0.5f, 0.5f, 0, 1});
  expect_near(run(batch_norm(ctx, x, mean, var, gamma, beta, 0.0f)), {-0.5f, 2.5f, -1, 0});
  // Channel axis 0: the two elements of each row are the two channels.
  Tensor* rows = make_f32(ctx, {2, 2, 1, 1}, {2, 10, 4, 30});
  expect_near(run(batch_norm(ctx, rows, mean, var, nullptr, nullptr, 0.0f, 0)), {0, 0, 1, 2});
}

TEST(Reference, Conv2dOneByOneKernelIsAChannelMix) {
  Context ctx;
  // kernel [1, 1, Cin=2, Cout=3]: out[x, y, co] = sum_ci k[ci, co] * in[x, y, ci].
  Tensor* kernel = make(ctx, DType::F16, {1, 1, 2, 3}, {1, 0, 0, 1, 2, -1});
  Tensor* input = make_f32(ctx, {2, 2, 2, 1}, {1, 2, 3, 4, 10, 20, 30, 40});
  EXPECT_EQ(run(conv_2d(ctx, kernel, input)), (std::vector<float>{1, 2, 3, 4, 10, 20, 30, 40, -8, -16, -24, -32}));
}

TEST(Reference, Conv2dPaddingStrideDilation) {
  Context ctx;
  // A 3x3 kernel of ones over 3x3 ones with padding 1 counts the in-bounds taps.
  Tensor* ones3 = make_f32(ctx, {3, 3, 1, 1}, std::vector<float>(9, 1.0f));
  Conv2dParams padded;
  padded.p0 = padded.p1 = 1;
  EXPECT_EQ(run(conv_2d(ctx, ones3, ones3, padded)), (std::vector<float>{4, 6, 4, 6, 9, 6, 4, 6, 4}));

  // 2x2 ones kernel with dilation 2 and stride 2 over in[x, y] = x + 10 y (5x5):
  // out[ox, oy] = sum over x in {2ox, 2ox+2}, y in {2oy, 2oy+2} = 4 (2 ox + 1) + 40 (2 oy + 1).
  std::vector<float> grid;
  for (int y = 0; y < 5; ++y) {
    for (int x = 0; x < 5; ++x) grid.push_back(float(x + 10 * y));
  }
  Tensor* input = make_f32(ctx, {5, 5, 1, 1}, grid);
  Tensor* ones2 = make_f32(ctx, {2, 2, 1, 1}, {1, 1, 1, 1});
  Conv2dParams strided;
  strided.s0 = strided.s1 = 2;
  strided.d0 = strided.d1 = 2;
  EXPECT_EQ(run(conv_2d(ctx, ones2, input, strided)), (std::vector<float>{44, 52, 124, 132}));
}

TEST(Reference, Pool2dWithPadding) {
  Context ctx;
  Tensor* a = make_f32(ctx, {2, 2, 1, 1}, {1, 2, 3, 4});
  Pool2dParams p;
  p.p0 = p.p1 = 1;  // each 2x2 window sees one real element and three padding cells
  p.op = PoolOp::AVG;
  EXPECT_EQ(run(pool_2d(ctx, a, p)), (std::vector<float>{0.25f, 0.5f, 0.75f, 1.0f}));
  p.op = PoolOp::MAX;
  Tensor* negative = make_f32(ctx, {2, 2, 1, 1}, {-5, -6, -7, -8});
  EXPECT_EQ(run(pool_2d(ctx, negative, p)), (std::vector<float>{-5, -6, -7, -8}));
}

TEST(Reference, Pool2dWithoutPadding) {
  Context ctx;
  std::vector<float> values(16);
  for (int i = 0; i < 16; ++i) values[size_t(i)] = float(i);
  Tensor* a = make_f32(ctx, {4, 4, 1, 1}, values);
  Pool2dParams p;
  EXPECT_EQ(run(pool_2d(ctx, a, p)), (std::vector<float>{5, 7, 13, 15}));
  p.op = PoolOp::AVG;
  EXPECT_EQ(run(pool_2d(ctx, a, p)), (std::vector<float>{2.5f, 4.5f, 10.5f, 12.5f}));
}

TEST(Reference, ConcatAlongEachDim) {
  Context ctx;
  Tensor* a = make_f32(ctx, {2, 1, 1, 1}, {1, 2});
  Tensor* b = make_f32(ctx, {1, 1, 1, 1}, {3});
  EXPECT_EQ(run(concat(ctx, a, b, 0)), (std::vector<float>{1, 2, 3}));
  Tensor* c = make_f32(ctx, {2, 1, 1, 1}, {3, 4});
  for (int dim = 1; dim < 4; ++dim) {
    Tensor* r = concat(ctx, a, c, dim);
    EXPECT_EQ(r->ne[dim], 2);
    EXPECT_EQ(run(r), (std::vector<float>{1, 2, 3, 4})) << "dim " << dim;
  }
  Tensor* m = make_f32(ctx, {2, 2, 1, 1}, {1, 2, 3, 4});
  Tensor* n = make_f32(ctx, {1, 2, 1, 1}, {9, 8});
  EXPECT_EQ(run(concat(ctx, m, n, 0)), (std::vector<float>{1, 2, 9, 3, 4, 8}));
  Tensor* ints = make_i32(ctx, {1, 1, 1, 1}, {16777217});
  Tensor* r = concat(ctx, ints, ints, 1);
  reference::compute_node(*r);
  EXPECT_EQ(read_i32(*r), (std::vector<int32_t>{16777217, 16777217}));
}

TEST(Reference, NoOpsEmptyTensorsAndUnknownOps) {
  Context ctx;
  Tensor* a = make_f32(ctx, {2, 2, 1, 1}, {1, 2, 3, 4});
  reference::compute_node(*a);  // a leaf
  reference::compute_node(*transpose(ctx, a));
  reference::compute_node(*reshape(ctx, a, {4}));
  EXPECT_EQ(test::read_f32(*a), (std::vector<float>{1, 2, 3, 4}));

  Tensor* empty = ctx.new_tensor(DType::F32, {0, 3});
  reference::compute_node(*relu(ctx, empty));

  Tensor* bogus = relu(ctx, a);
  bogus->op = Op(kOpCount);
  EXPECT_THROW(reference::compute_node(*bogus), Error);
}

TEST(Reference, ComputeGraphRunsNodesInOrder) {
  Context ctx;
  Tensor* a = make_f32(ctx, {3, 1, 1, 1}, {-1, 2, -3});
  Tensor* b = make_f32(ctx, {3, 1, 1, 1}, {1, 1, 1});
  Tensor* out = scale(ctx, relu(ctx, add(ctx, a, b)), 2.0f);
  reference::compute_graph(Graph::build(out));
  EXPECT_EQ(test::read_f32(*out), (std::vector<float>{0, 6, 0}));
}

// --- Layout independence: every op gives bit-identical results for any input layout. ---

// Creates an input of the given logical shape in the layout under test, filled from `rng`.
using MakeInput = std::function<Tensor*(DType type, std::array<int64_t, 4> ne, float lo, float hi)>;
using BuildOp = std::function<Tensor*(Context& ctx, const MakeInput& input)>;

struct LayoutCase {
  std::string name;
  BuildOp build;
};

std::vector<float> run_in_layout(const LayoutCase& c, test::Layout layout) {
  Context ctx;
  test::Rng rng(1234);
  const MakeInput input = [&](DType type, std::array<int64_t, 4> ne, float lo, float hi) {
    // Transposing would split q8_0 blocks, so q8_0 inputs keep a row-contiguous layout.
    const bool split_blocks = type == DType::Q8_0 && layout == test::Layout::kTransposed;
    Tensor* t = test::new_tensor(ctx, type, ne, split_blocks ? test::Layout::kPaddedRows : layout);
    test::fill_uniform(*t, rng, lo, hi);
    return t;
  };
  Tensor* out = c.build(ctx, input);
  reference::compute_graph(Graph::build(out));
  return test::read_f32(*out);
}

const std::vector<LayoutCase>& layout_cases() {
  static const std::vector<LayoutCase> cases = {
      {"mul_mat",
       [](Context& ctx, const MakeInput& in) {
         return mul_mat(ctx, in(DType::F16, {8, 5, 2, 1}, -1, 1), in(DType::F32, {8, 3, 4, 1}, -1, 1));
       }},
      {"mul_mat_q8_0",
       [](Context& ctx, const MakeInput& in) {
         return mul_mat(ctx, in(DType::Q8_0, {32, 3, 2, 1}, -1, 1), in(DType::F32, {32, 2, 2, 1}, -1, 1));
       }},
      {"add_broadcast",
       [](Context& ctx, const MakeInput& in) {
         return add(ctx, in(DType::F32, {6, 4, 3, 2}, -1, 1), in(DType::F32, {6, 1, 3, 1}, -1, 1));
       }},
      {"div_bf16",
       [](Context& ctx, const MakeInput& in) {
         return div(ctx, in(DType::BF16, {5, 3, 2, 1}, -1, 1), in(DType::F32, {5, 3, 1, 1}, 1, 2));
       }},
      {"unary_gelu_f16",
       [](Context& ctx, const MakeInput& in) {
         return gelu(ctx, in(DType::F16, {7, 3, 2, 1}, -3, 3));
       }},
      {"glu_fused",
       [](Context& ctx, const MakeInput& in) {
         return glu(ctx, in(DType::F32, {8, 3, 2, 1}, -2, 2), GluOp::GEGLU, true);
       }},
      {"glu_split",
       [](Context& ctx, const MakeInput& in) {
         return swiglu(ctx, in(DType::F32, {4, 3, 2, 1}, -2, 2), in(DType::F32, {4, 3, 2, 1}, -2, 2));
       }},
      {"norm",
       [](Context& ctx, const MakeInput& in) {
         return norm(ctx, in(DType::F32, {9, 3, 2, 1}, -1, 1), 1e-5f);
       }},
      {"rms_norm",
       [](Context& ctx, const MakeInput& in) {
         return rms_norm(ctx, in(DType::F16, {9, 3, 2, 1}, -1, 1), 1e-5f);
       }},
      {"soft_max_mask_alibi",
       [](Context& ctx, const MakeInput& in) {
         return soft_max(ctx, in(DType::F32, {6, 3, 4, 1}, -2, 2), in(DType::F16, {6, 4, 1, 1}, -1, 1), 0.7f, 8.0f);
       }},
      {"rope_neox_freq_factors",
       [](Context& ctx, const MakeInput& in) {
         RopeParams p;
         p.n_dims = 6;
         p.mode = RopeMode::NEOX;
         p.ext_factor = 0.5f;
         p.freq_scale = 0.5f;
         p.n_ctx_orig = 64;
         return rope(ctx, in(DType::F32, {8, 2, 3, 1}, -1, 1), in(DType::I32, {3, 1, 1, 1}, 0, 100), p,
                     in(DType::F32, {3, 1, 1, 1}, 1, 4));
       }},
      {"get_rows_f16",
       [](Context& ctx, const MakeInput& in) {
         return get_rows(ctx, in(DType::F16, {4, 5, 2, 1}, -1, 1), in(DType::I32, {3, 2, 1, 1}, 0, 5));
       }},
      {"set_rows",
       [](Context& ctx, const MakeInput& in) {
         return set_rows(ctx, in(DType::F32, {4, 5, 2, 1}, -1, 1), in(DType::F32, {4, 3, 2, 1}, -1, 1),
                         in(DType::I32, {3, 1, 1, 1}, 0, 5));
       }},
      {"cpy_to_f16",
       [](Context& ctx, const MakeInput& in) {
         return cpy(ctx, in(DType::F32, {4, 3, 2, 1}, -1, 1), in(DType::F16, {6, 2, 2, 1}, 0, 1));
       }},
      {"cont",
       [](Context& ctx, const MakeInput& in) {
         return cont(ctx, in(DType::BF16, {4, 3, 2, 1}, -1, 1));
       }},
      {"flash_attn_ext",
       [](Context& ctx, const MakeInput& in) {
         return flash_attn_ext(ctx, in(DType::F32, {8, 3, 4, 1}, -1, 1), in(DType::F16, {8, 5, 2, 1}, -1, 1),
                               in(DType::F32, {6, 5, 2, 1}, -1, 1), in(DType::F16, {5, 3, 1, 1}, -1, 1), 0.4f, 2.0f,
                               3.0f);
       }},
      {"sum_rows",
       [](Context& ctx, const MakeInput& in) {
         return sum_rows(ctx, in(DType::F32, {7, 3, 2, 1}, -1, 1));
       }},
      {"argmax",
       [](Context& ctx, const MakeInput& in) {
         return argmax(ctx, in(DType::F32, {7, 5, 1, 1}, -1, 1));
       }},
      {"batch_norm",
       [](Context& ctx, const MakeInput& in) {
         return batch_norm(ctx, in(DType::F32, {3, 4, 2, 2}, -1, 1), in(DType::F32, {2, 1, 1, 1}, -1, 1),
                           in(DType::F32, {2, 1, 1, 1}, 0.5f, 2), in(DType::F32, {2, 1, 1, 1}, -1, 1),
                           in(DType::F32, {2, 1, 1, 1}, -1, 1), 1e-5f);
       }},
      {"conv_2d",
       [](Context& ctx, const MakeInput& in) {
         Conv2dParams p;
         p.s0 = 2;
         p.p1 = 1;
         p.d1 = 2;
         return conv_2d(ctx, in(DType::F16, {3, 2, 2, 3}, -1, 1), in(DType::F32, {7, 6, 2, 2}, -1, 1), p);
       }},
      {"pool_2d_avg",
       [](Context& ctx, const MakeInput& in) {
         Pool2dParams p;
         p.op = PoolOp::AVG;
         p.k0 = 3;
         p.s0 = 1;
         p.p0 = 1;
         return pool_2d(ctx, in(DType::F32, {5, 4, 3, 2}, -1, 1), p);
       }},
      {"concat_dim2",
       [](Context& ctx, const MakeInput& in) {
         return concat(ctx, in(DType::F32, {3, 2, 2, 1}, -1, 1), in(DType::F32, {3, 2, 3, 1}, -1, 1), 2);
       }},
  };
  return cases;
}

class ReferenceLayout : public ::testing::TestWithParam<test::Layout> {};

TEST_P(ReferenceLayout, MatchesContiguousInputsBitForBit) {
  for (const LayoutCase& c : layout_cases()) {
    const std::vector<float> contiguous = run_in_layout(c, test::Layout::kContiguous);
    EXPECT_EQ(run_in_layout(c, GetParam()), contiguous) << c.name;
  }
}

INSTANTIATE_TEST_SUITE_P(Layouts, ReferenceLayout,
                         ::testing::Values(test::Layout::kPaddedRows, test::Layout::kPermuted,
                                           test::Layout::kTransposed),
                         [](const auto& info) { return std::string(test::layout_name(info.param)); });

}  // namespace
}  // namespace tg
