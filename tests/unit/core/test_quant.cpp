// The quantized types of quant.h: hand-built blocks whose expected values are worked out by hand
// from ggml's format (not from the dequantizers under test), and quantize -> dequantize round trips
// within the error bounds quant.h states, on random data and on edge cases.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "tilegraph/core/dtype.h"
#include "tilegraph/core/error.h"
#include "tilegraph/core/quant.h"

namespace tg {
namespace {

constexpr uint16_t kF16Quarter = 0x3400, kF16Half = 0x3800, kF16One = 0x3C00, kF16Two = 0x4000, kF16MinusOne = 0xBC00;

std::vector<float> dequantized(DType type, const void* blocks, int64_t n) {
  std::vector<float> y(static_cast<size_t>(n));
  row_to_f32(type, blocks, y.data(), n);
  return y;
}

TEST(Quant, TraitsNamesAndRowSizes) {
  struct Expected {
    DType type;
    const char* name;
    size_t block, bytes;
  };
  for (const Expected& e : {Expected{DType::Q4_0, "q4_0", 32, 18}, Expected{DType::Q4_1, "q4_1", 32, 20},
                            Expected{DType::Q5_0, "q5_0", 32, 22}, Expected{DType::Q5_1, "q5_1", 32, 24},
                            Expected{DType::Q4_K, "q4_K", 256, 144}, Expected{DType::Q5_K, "q5_K", 256, 176},
                            Expected{DType::Q6_K, "q6_K", 256, 210}}) {
    EXPECT_EQ(dtype_name(e.type), e.name);
    EXPECT_TRUE(is_quantized(e.type));
    EXPECT_EQ(dtype_traits(e.type).block_size, e.block) << e.name;
    EXPECT_EQ(dtype_traits(e.type).type_size, e.bytes) << e.name;
    EXPECT_EQ(row_size(e.type, int64_t(3 * e.block)), 3 * e.bytes) << e.name;
    EXPECT_THROW(row_size(e.type, int64_t(e.block) + 1), Error) << e.name;
    EXPECT_EQ(parse_dtype(e.name), e.type);
  }
  EXPECT_EQ(parse_dtype("q4_k"), DType::Q4_K);  // any letter case
  EXPECT_EQ(parse_dtype("Q6_K"), DType::Q6_K);
  EXPECT_FALSE(is_quantized(DType::BF16));
  try {
    parse_dtype("q3_K");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("q4_0, q4_1, q5_0, q5_1, q4_K, q5_K, q6_K"), std::string::npos) << e.what();
  }
}

// ---- hand-built blocks ----

TEST(Quant, Q4_0BlockDecodesByHand) {
  BlockQ4_0 b{};
  b.d = f16{kF16Half};
  b.qs[0] = 0x1F;  // element 0: low nibble 15, element 16: high nibble 1
  b.qs[1] = 0x09;
  b.qs[15] = 0x80;
  const std::vector<float> y = dequantized(DType::Q4_0, &b, 32);
  EXPECT_EQ(y[0], 3.5f);    // (15 - 8) * 0.5
  EXPECT_EQ(y[16], -3.5f);  // (1 - 8) * 0.5
  EXPECT_EQ(y[1], 0.5f);    // (9 - 8) * 0.5
  EXPECT_EQ(y[17], -4.0f);
  EXPECT_EQ(y[15], -4.0f);
  EXPECT_EQ(y[31], 0.0f);  // (8 - 8) * 0.5
  EXPECT_EQ(y[7], -4.0f);  // a zero byte: (0 - 8) * 0.5
  EXPECT_EQ(y[20], -4.0f);
}

TEST(Quant, Q4_1BlockDecodesByHand) {
  BlockQ4_1 b{};
  b.d = f16{kF16Quarter};
  b.m = f16{kF16MinusOne};
  b.qs[0] = 0x1F;
  b.qs[3] = 0xA0;
  const std::vector<float> y = dequantized(DType::Q4_1, &b, 32);
  EXPECT_EQ(y[0], 2.75f);    // 15 * 0.25 - 1
  EXPECT_EQ(y[16], -0.75f);  // 1 * 0.25 - 1
  EXPECT_EQ(y[3], -1.0f);
  EXPECT_EQ(y[19], 1.5f);  // 10 * 0.25 - 1
  EXPECT_EQ(y[30], -1.0f);
}

TEST(Quant, Q5_0BlockDecodesByHand) {
  BlockQ5_0 b{};
  b.d = f16{kF16One};
  // qh as a little-endian uint32: bits 0, 8 and 31 set (elements 0, 8 and 31 get their 5th bit).
  b.qh[0] = 0x01;
  b.qh[1] = 0x01;
  b.qh[3] = 0x80;
  b.qs[0] = 0x23;
  b.qs[15] = 0x50;
  const std::vector<float> y = dequantized(DType::Q5_0, &b, 32);
  EXPECT_EQ(y[0], 3.0f);     // (3 | 16) - 16
  EXPECT_EQ(y[16], -14.0f);  // 2 - 16
  EXPECT_EQ(y[8], 0.0f);     // (0 | 16) - 16
  EXPECT_EQ(y[15], -16.0f);
  EXPECT_EQ(y[31], 5.0f);  // (5 | 16) - 16
  EXPECT_EQ(y[9], -16.0f);
}

TEST(Quant, Q5_1BlockDecodesByHand) {
  BlockQ5_1 b{};
  b.d = f16{kF16Half};
  b.m = f16{kF16Two};
  b.qh[2] = 0x01;  // bit 16: element 16
  b.qs[0] = 0x74;
  const std::vector<float> y = dequantized(DType::Q5_1, &b, 32);
  EXPECT_EQ(y[0], 4.0f);    // 4 * 0.5 + 2
  EXPECT_EQ(y[16], 13.5f);  // (7 | 16) * 0.5 + 2
  EXPECT_EQ(y[1], 2.0f);
  EXPECT_EQ(y[17], 2.0f);
}

// Sub-block scales {1, 2, 3, 4, 44, 21, 63, 16} and mins {0, 5, 63, 7, 33, 2, 50, 17}, packed by
// hand: bytes 0-3 hold scales 0-3 with the top 2 bits of scales 4-7 above them, bytes 4-7 mins
// 0-3 with the top bits of mins 4-7, bytes 8-11 the low nibbles of scale (low) and min (high) 4-7.
constexpr uint8_t kPackedScalesK[12] = {0x81, 0x42, 0xC3, 0x44, 0x80, 0x05, 0xFF, 0x47, 0x1C, 0x25, 0x2F, 0x10};
constexpr int kScalesK[8] = {1, 2, 3, 4, 44, 21, 63, 16};
constexpr int kMinsK[8] = {0, 5, 63, 7, 33, 2, 50, 17};

TEST(Quant, KScalesUnpackByHand) {
  for (int s = 0; s < 8; ++s) {
    int sc = -1, m = -1;
    unpack_scale_min_k(kPackedScalesK, s, &sc, &m);
    EXPECT_EQ(sc, kScalesK[s]) << "sub-block " << s;
    EXPECT_EQ(m, kMinsK[s]) << "sub-block " << s;
  }
}

TEST(Quant, Q4_KBlockDecodesByHand) {
  BlockQ4_K b{};
  b.d = f16{kF16One};
  b.dmin = f16{kF16Half};
  std::memcpy(b.scales, kPackedScalesK, 12);
  b.qs[0] = 0x21;        // element 0 (sub-block 0, low nibble 1), element 32 (sub-block 1, high 2)
  b.qs[31] = 0xF0;       // element 31: 0, element 63: 15
  b.qs[32] = 0x9A;       // chunk 1: element 64 (sub-block 2): 10, element 96 (sub-block 3): 9
  b.qs[64 + 5] = 0x73;   // chunk 2: element 133 (sub-block 4): 3, element 165 (sub-block 5): 7
  b.qs[96 + 31] = 0x4E;  // chunk 3: element 223 (sub-block 6): 14, element 255 (sub-block 7): 4
  const std::vector<float> y = dequantized(DType::Q4_K, &b, 256);
  // d * sc * q - dmin * m
  EXPECT_EQ(y[0], 1.0f);   // 1 * 1 - 0
  EXPECT_EQ(y[32], 1.5f);  // 2 * 2 - 0.5 * 5
  EXPECT_EQ(y[31], 0.0f);
  EXPECT_EQ(y[63], 27.5f);    // 2 * 15 - 2.5
  EXPECT_EQ(y[64], -1.5f);    // 3 * 10 - 31.5
  EXPECT_EQ(y[96], 32.5f);    // 4 * 9 - 3.5
  EXPECT_EQ(y[133], 115.5f);  // 44 * 3 - 16.5
  EXPECT_EQ(y[165], 146.0f);  // 21 * 7 - 1
  EXPECT_EQ(y[223], 857.0f);  // 63 * 14 - 25
  EXPECT_EQ(y[255], 55.5f);   // 16 * 4 - 8.5
  // Zero quants leave -dmin * m of their sub-block.
  const float zero_quant[8] = {0.0f, -2.5f, -31.5f, -3.5f, -16.5f, -1.0f, -25.0f, -8.5f};
  for (int s = 0; s < 8; ++s) EXPECT_EQ(y[size_t(s * 32 + 10)], zero_quant[s]) << "sub-block " << s;
}

TEST(Quant, Q5_KBlockDecodesByHand) {
  BlockQ5_K b{};
  b.d = f16{kF16One};
  b.dmin = f16{kF16Half};
  std::memcpy(b.scales, kPackedScalesK, 12);
  b.qs[0] = 0x21;
  b.qs[64 + 5] = 0x73;
  b.qs[96 + 31] = 0x4E;
  b.qh[0] = 0x01;   // bit 0 (chunk 0, low half): element 0
  b.qh[5] = 0x20;   // bit 5 = 2 * 2 + 1 (chunk 2, high half): element 165, not 133
  b.qh[31] = 0x80;  // bit 7 = 2 * 3 + 1: element 255
  const std::vector<float> y = dequantized(DType::Q5_K, &b, 256);
  EXPECT_EQ(y[0], 17.0f);     // 1 * (1 + 16) - 0
  EXPECT_EQ(y[32], 1.5f);     // no high bit: 2 * 2 - 2.5
  EXPECT_EQ(y[133], 115.5f);  // 44 * 3 - 16.5
  EXPECT_EQ(y[165], 482.0f);  // 21 * (7 + 16) - 1
  EXPECT_EQ(y[223], 857.0f);  // 63 * 14 - 25
  EXPECT_EQ(y[255], 311.5f);  // 16 * (4 + 16) - 8.5
  EXPECT_EQ(y[64 + 32 + 5], -3.5f);
}

TEST(Quant, Q6_KBlockDecodesByHand) {
  BlockQ6_K b{};
  b.d = f16{kF16Half};
  for (int s = 0; s < 16; ++s) b.scales[s] = int8_t(s % 2 ? -(s + 1) : s + 1);  // 1, -2, 3, ...
  b.ql[3] = 0x5A;
  b.qh[3] = 0xE4;  // top bits, 2 per element: 00 (element 3), 01 (35), 10 (67), 11 (99)
  b.ql[64 + 32 + 7] = 0xC3;
  b.qh[32 + 7] = 0x40;
  const std::vector<float> y = dequantized(DType::Q6_K, &b, 256);
  // d * sc[e / 16] * (q - 32)
  EXPECT_EQ(y[3], -11.0f);     // q = 0xA:           0.5 * 1 * (10 - 32)
  EXPECT_EQ(y[35], -24.0f);    // q = 0 | 1 << 4:    0.5 * 3 * (16 - 32)
  EXPECT_EQ(y[67], 12.5f);     // q = 5 | 2 << 4:    0.5 * 5 * (37 - 32)
  EXPECT_EQ(y[99], 56.0f);     // q = 0 | 3 << 4:    0.5 * 7 * (48 - 32)
  EXPECT_EQ(y[135], -144.0f);  // second half, q = 0: 0.5 * 9 * -32
  EXPECT_EQ(y[167], -159.5f);  // q = 3:             0.5 * 11 * (3 - 32)
  EXPECT_EQ(y[231], -30.0f);   // q = 12 | 1 << 4:   0.5 * 15 * (28 - 32)
  EXPECT_EQ(y[17], 32.0f);     // q = 0:             0.5 * -2 * -32
  EXPECT_EQ(y[255], 256.0f);   // 0.5 * -16 * -32
}

// ---- round trips ----

struct Case {
  std::string name;
  std::vector<float> x;
};

// Random data and edge cases, `blocks` blocks of `block` elements each.
std::vector<Case> round_trip_cases(int block, int blocks) {
  const size_t n = size_t(block) * size_t(blocks);
  std::mt19937 rng(5);
  auto uniform = [&](float lo, float hi) {
    std::uniform_real_distribution<float> dist(lo, hi);
    std::vector<float> x(n);
    for (float& v : x) v = dist(rng);
    return x;
  };
  std::vector<Case> cases = {
      {"uniform", uniform(-4.0f, 4.0f)},          {"zeros", std::vector<float>(n, 0.0f)},
      {"negative_only", uniform(-3.0f, -1.0f)},   {"positive_only", uniform(0.5f, 2.0f)},
      {"tiny", uniform(-1e-3f, 1e-3f)},           {"outlier", uniform(-1.0f, 1.0f)},
      {"negative_outlier", uniform(-1.0f, 1.0f)}, {"constant", std::vector<float>(n, -0.75f)},
  };
  cases[5].x[size_t(block) + 7] = 1000.0f;  // one huge value in the second block
  cases[6].x[size_t(block) + 40 % size_t(block)] = -1000.0f;
  // One zero block among random ones, mid-row.
  std::fill(cases[0].x.begin() + block, cases[0].x.begin() + 2 * block, 0.0f);
  return cases;
}

// Checks quantize -> dequantize of every case against bound(x of one block, i) per element.
void check_round_trip(DType type, int blocks, const std::function<double(const float* block, int i)>& bound) {
  const int block = int(dtype_traits(type).block_size);
  for (const Case& c : round_trip_cases(block, blocks)) {
    const int64_t n = int64_t(c.x.size());
    std::vector<char> q(row_size(type, n));
    row_from_f32(type, c.x.data(), q.data(), n);
    const std::vector<float> y = dequantized(type, q.data(), n);
    for (int64_t i = 0; i < n; ++i) {
      const float* xb = c.x.data() + i / block * block;
      const double err = std::fabs(double(y[size_t(i)]) - double(c.x[size_t(i)]));
      ASSERT_TRUE(std::isfinite(y[size_t(i)])) << dtype_name(type) << " " << c.name << " element " << i;
      ASSERT_LE(err, bound(xb, int(i % block))) << dtype_name(type) << " " << c.name << " element " << i << ": x "
                                                << c.x[size_t(i)] << ", got " << y[size_t(i)];
    }
    if (c.name == "zeros") {
      for (float v : y) ASSERT_EQ(v, 0.0f) << dtype_name(type);
    }
  }
  EXPECT_THROW(row_from_f32(type, std::vector<float>(size_t(block)).data(), std::vector<char>(1024).data(), block - 1),
               Error);
}

constexpr double kF16Rel = 1.0 / 2048;     // an f16's relative rounding error (2^-11)...
constexpr double kF16Subnormal = 0x1p-24;  // ...or absolute, below 6e-5 (subnormal spacing)

// A scale x as stored in f16, at most: up one f16 step.
double f16_up(double x) { return x * (1 + 2 * kF16Rel) + kF16Subnormal; }

double absmax(const float* x, int n) {
  double m = 0.0;
  for (int i = 0; i < n; ++i) m = std::max(m, std::fabs(double(x[i])));
  return m;
}

// q4_0 / q5_0: d = amax / 2^(bits-1); within |d| (a clamped opposite extreme), else d / 2, plus
// the f16 rounding of d times the largest quant magnitude.
std::function<double(const float*, int)> symmetric_bound(int bits) {
  return [bits](const float* x, int i) {
    const double offset = double(1 << (bits - 1)), d = absmax(x, 32) / offset;
    const double rounding = offset * (d * kF16Rel + kF16Subnormal / 2) + 1e-30;
    // Values whose quant would pass the top (x / d > offset - 0.5 on the side opposite the
    // largest) are clamped: within one step.
    float max = 0.0f;
    for (int j = 0; j < 32; ++j) {
      if (std::fabs(x[j]) > std::fabs(max)) max = x[j];
    }
    const bool clamped = double(x[i]) * double(max) < 0 && std::fabs(x[i]) > (offset - 0.5) * d;
    return (clamped ? d : 0.5 * d) + rounding;
  };
}

// q4_1 / q5_1: d = (max - min) / top, m = min: within d / 2 plus the f16 roundings of d and m.
std::function<double(const float*, int)> affine_bound(int bits) {
  return [bits](const float* x, int) {
    const double top = double((1 << bits) - 1);
    const auto [lo, hi] = std::minmax_element(x, x + 32);
    const double d = (double(*hi) - double(*lo)) / top;
    return 0.5 * d + (std::fabs(*lo) + top * d) * kF16Rel + (1 + top) * kF16Subnormal / 2 + 1e-30;
  };
}

// q4_K / q5_K (quant.h): within (step_s + D) / 2 + M, step_s = sub-block s's span / top, D = the
// largest step / 63, M = the largest -min(0, min) / 63 (plus f32 rounding of the block's values).
std::function<double(const float*, int)> k_affine_bound(int bits) {
  return [bits](const float* x, int i) {
    const double top = double((1 << bits) - 1);
    double steps[8], max_step = 0.0, max_offset = 0.0;
    for (int s = 0; s < 8; ++s) {
      const auto [lo, hi] = std::minmax_element(x + 32 * s, x + 32 * s + 32);
      const double low = std::min(0.0, double(*lo));
      steps[s] = (double(*hi) - low) / top;
      max_step = std::max(max_step, steps[s]);
      max_offset = std::max(max_offset, -low);
    }
    const double d = f16_up(max_step / 63.0), m = f16_up(max_offset / 63.0);
    return 0.5 * (steps[i / 32] + d) + m + absmax(x, 256) * 1e-6 + 1e-30;
  };
}

// q6_K (quant.h): within (step_s + D) / 2, step_s = max|x| of sub-block s / 31, D = largest / 127.
double q6_k_bound(const float* x, int i) {
  double max_step = 0.0;
  for (int s = 0; s < 16; ++s) max_step = std::max(max_step, absmax(x + 16 * s, 16) / 31.0);
  const double step = absmax(x + i / 16 * 16, 16) / 31.0;
  return 0.5 * (step + f16_up(max_step / 127.0)) + absmax(x, 256) * 1e-6 + 1e-30;
}

TEST(Quant, Q4_0RoundTripWithinItsBound) { check_round_trip(DType::Q4_0, 5, symmetric_bound(4)); }
TEST(Quant, Q5_0RoundTripWithinItsBound) { check_round_trip(DType::Q5_0, 5, symmetric_bound(5)); }
TEST(Quant, Q4_1RoundTripWithinItsBound) { check_round_trip(DType::Q4_1, 5, affine_bound(4)); }
TEST(Quant, Q5_1RoundTripWithinItsBound) { check_round_trip(DType::Q5_1, 5, affine_bound(5)); }
TEST(Quant, Q4_KRoundTripWithinItsBound) { check_round_trip(DType::Q4_K, 3, k_affine_bound(4)); }
TEST(Quant, Q5_KRoundTripWithinItsBound) { check_round_trip(DType::Q5_K, 3, k_affine_bound(5)); }
TEST(Quant, Q6_KRoundTripWithinItsBound) { check_round_trip(DType::Q6_K, 3, q6_k_bound); }

// The bounds above allow for an outlier; on plain uniform data every format gets close to its
// step's ideal error (an NMSE of 1/(3 levels^2) for uniform values and a span of 2 * levels steps).
TEST(Quant, UniformDataErrorMatchesTheFormatsPrecision) {
  struct Expected {
    DType type;
    double max_nmse;
  };
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> x(256 * 16);
  for (float& v : x) v = dist(rng);
  // A step of 2/15 (4 bits over [-1, 1]) gives (2/15)^2 / 12 / (1/3) = 4.4e-3. Measured: q4_0
  // 4.4e-3, q4_1 3.7e-3, q5_0 9.8e-4, q5_1 8.5e-4, q4_K 3.8e-3, q5_K 9.0e-4, q6_K 2.3e-4 (q8_0
  // 1.4e-5): each extra bit divides it by about 4.
  for (const Expected& e : {Expected{DType::Q4_0, 6e-3}, Expected{DType::Q4_1, 5e-3}, Expected{DType::Q5_0, 1.5e-3},
                            Expected{DType::Q5_1, 1.3e-3}, Expected{DType::Q4_K, 5e-3}, Expected{DType::Q5_K, 1.3e-3},
                            Expected{DType::Q6_K, 3.5e-4}}) {
    std::vector<char> q(row_size(e.type, int64_t(x.size())));
    row_from_f32(e.type, x.data(), q.data(), int64_t(x.size()));
    const std::vector<float> y = dequantized(e.type, q.data(), int64_t(x.size()));
    double err2 = 0.0, ref2 = 0.0;
    for (size_t i = 0; i < x.size(); ++i) {
      err2 += (double(y[i]) - x[i]) * (double(y[i]) - x[i]);
      ref2 += double(x[i]) * x[i];
    }
    EXPECT_LT(err2 / ref2, e.max_nmse) << dtype_name(e.type);
    EXPECT_GT(err2 / ref2, e.max_nmse / 10) << dtype_name(e.type) << ": suspiciously exact";
  }
}

// ---- q8_K, the activations of K-quant products ----

TEST(Quant, Q8_KQuantizesByHand) {
  std::vector<float> x(256, 0.0f);
  x[0] = -2.54f;  // the largest magnitude: d = 0.02, q = -127
  x[1] = 0.01f;   // 0.5 d: a tie, to even (0)
  x[2] = 0.03f;   // 1.5 d: to even (2)
  x[17] = 1.0f;   // 50 d
  x[255] = -0.05f;
  BlockQ8_K b;
  quantize_row_q8_K(x.data(), &b, 256);
  const float d = 2.54f / 127.0f;
  EXPECT_EQ(b.d, d);
  EXPECT_EQ(b.qs[0], -127);
  EXPECT_EQ(b.qs[1], int(std::nearbyint(0.01f / d)));
  EXPECT_EQ(b.qs[2], int(std::nearbyint(0.03f / d)));
  EXPECT_EQ(b.qs[17], 50);
  EXPECT_EQ(b.qs[255], -int(std::nearbyint(0.05f / d)));
  EXPECT_EQ(b.bsums[0], -127 + b.qs[1] + b.qs[2]);
  EXPECT_EQ(b.bsums[1], 50);
  EXPECT_EQ(b.bsums[15], b.qs[255]);
  for (int s = 2; s < 15; ++s) EXPECT_EQ(b.bsums[s], 0) << s;

  std::vector<float> y(256);
  dequantize_row_q8_K(&b, y.data(), 256);
  EXPECT_EQ(y[17], 50 * d);
  std::vector<float> rounded = x;
  round_activations(DType::Q4_K, rounded.data(), 256);
  EXPECT_EQ(rounded, y);
}

TEST(Quant, Q8_KEdgeBlocks) {
  BlockQ8_K b;
  std::vector<float> zeros(256, 0.0f);
  quantize_row_q8_K(zeros.data(), &b, 256);
  EXPECT_EQ(b.d, 0.0f);
  EXPECT_TRUE(std::all_of(std::begin(b.qs), std::end(b.qs), [](int8_t q) { return q == 0; }));

  // An inf or NaN anywhere in the block: d NaN, so every product with the block is NaN.
  for (float bad : {INFINITY, -INFINITY, NAN}) {
    std::vector<float> x(512, 1.0f);
    x[300] = bad;
    BlockQ8_K two[2];
    quantize_row_q8_K(x.data(), two, 512);
    EXPECT_EQ(two[0].d, 1.0f / 127.0f) << "the other block is untouched";
    EXPECT_TRUE(std::isnan(two[1].d)) << bad;
    EXPECT_TRUE(std::all_of(std::begin(two[1].qs), std::end(two[1].qs), [](int8_t q) { return q == 0; }));
    EXPECT_EQ(two[1].bsums[3], 0);
  }

  // Subnormal magnitudes: d is inexact there, the quants stay within -127..127.
  std::vector<float> tiny(256);
  for (int i = 0; i < 256; ++i) tiny[size_t(i)] = float(i - 128) * 1e-42f;
  quantize_row_q8_K(tiny.data(), &b, 256);
  EXPECT_GT(b.d, 0.0f);
  for (int i = 0; i < 256; ++i) EXPECT_LE(std::abs(int(b.qs[i])), 127) << i;
  EXPECT_EQ(b.qs[0], -127);

  EXPECT_THROW(quantize_row_q8_K(tiny.data(), &b, 100), Error);
}

TEST(Quant, ActivationTypeOfEachWeightType) {
  for (DType type : {DType::Q4_K, DType::Q5_K, DType::Q6_K}) EXPECT_EQ(activation_type(type), ActivationType::Q8_K);
  for (DType type : {DType::Q8_0, DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1}) {
    EXPECT_EQ(activation_type(type), ActivationType::Q8_32);
  }
  for (DType type : {DType::F32, DType::F16}) EXPECT_EQ(activation_type(type), ActivationType::F32);
  EXPECT_EQ(activation_type(DType::BF16), ActivationType::BF16);
  std::vector<float> x = {0.3f, -1.7f};
  round_activations(DType::F16, x.data(), 2);  // f32 activations: untouched, any length
  EXPECT_EQ(x, (std::vector<float>{0.3f, -1.7f}));
  EXPECT_THROW(round_activations(DType::Q4_0, x.data(), 2), Error);
}

TEST(Quant, Bf16WeightsRoundTheirActivationsToNearestEven) {
  // 1 + 2^-8 lies halfway between two bf16 (8 significant bits): to even, 1. 1 + 3 * 2^-8 lies
  // halfway between 1 + 2^-7 and 1 + 2^-6: to even, 1 + 2^-6. Any length, odd ones too.
  std::vector<float> x = {1.0f + 0x1p-8f, 1.0f + 3 * 0x1p-8f, -0.3f, 65504.0f, 0.0f};
  round_activations(DType::BF16, x.data(), int64_t(x.size()));
  EXPECT_EQ(x[0], 1.0f);
  EXPECT_EQ(x[1], 1.0f + 0x1p-6f);
  EXPECT_EQ(x[2], bf16_to_f32(f32_to_bf16(-0.3f)));
  EXPECT_NE(x[2], -0.3f);
  EXPECT_EQ(x[3], 65536.0f);
  EXPECT_EQ(x[4], 0.0f);
  for (float v : x) EXPECT_EQ(v, bf16_to_f32(f32_to_bf16(v))) << "already a bf16";
}

TEST(Quant, Q8_32QuantizesByHandWithItsSum) {
  std::vector<float> x(64, 0.0f);
  x[0] = 12.7f;   // d = 0.1
  x[5] = -0.25f;  // -2.5 steps: to even, -2
  x[31] = 0.35f;  // 3.5 steps: to even, 4
  x[40] = -1.0f;  // the second block: d = 1/127, q = -127
  BlockQ8_32 b[2];
  quantize_row_q8_32(x.data(), b, 64);
  // The quants come from the f32 d; the d kept is its nearest f16, as in ggml's q8_0.
  const float d = 12.7f / 127.0f, d16 = f16_to_f32(f32_to_f16(d));
  EXPECT_NE(d16, d);
  EXPECT_EQ(q8_32_step(d), d16);
  EXPECT_EQ(b[0].d, d16);
  EXPECT_EQ(b[0].qs[0], 127);
  EXPECT_EQ(b[0].qs[5], int(std::nearbyint(-0.25f / d)));
  EXPECT_EQ(b[0].qs[31], int(std::nearbyint(0.35f / d)));
  // s is the f32 d times the quants' sum, rounded to f16 once, as ggml's q8_1 stores it: not the
  // f16 d times the sum.
  const float sum0 = float(127 + b[0].qs[5] + b[0].qs[31]);
  EXPECT_EQ(b[0].s, q8_32_step(d * sum0));
  EXPECT_NE(b[0].s, d16 * sum0);
  EXPECT_EQ(b[1].d, f16_to_f32(f32_to_f16(1.0f / 127.0f)));
  EXPECT_EQ(b[1].qs[8], -127);
  EXPECT_EQ(b[1].s, q8_32_step(1.0f / 127.0f * -127.0f));
  std::vector<float> y(64), rounded = x;
  dequantize_row_q8_32(b, y.data(), 64);
  round_activations(DType::Q5_1, rounded.data(), 64);
  EXPECT_EQ(rounded, y);
  EXPECT_EQ(y[40], -127.0f * b[1].d);

  x[33] = std::numeric_limits<float>::quiet_NaN();
  quantize_row_q8_32(x.data(), b, 64);
  EXPECT_EQ(b[0].d, d16) << "the other block is untouched";
  EXPECT_TRUE(std::isnan(b[1].d));
  EXPECT_TRUE(std::isnan(b[1].s));
  EXPECT_THROW(quantize_row_q8_32(x.data(), b, 48), Error);
}

TEST(Quant, Q8_KRoundTripWithinHalfAStep) {
  std::mt19937 rng(12);
  std::normal_distribution<float> dist(0.0f, 3.0f);
  std::vector<float> x(256 * 8);
  for (float& v : x) v = dist(rng);
  x[700] = 90.0f;  // an outlier makes its block coarser, not the others
  std::vector<float> y = x;
  round_activations(DType::Q6_K, y.data(), int64_t(y.size()));
  for (size_t b = 0; b < 8; ++b) {
    float amax = 0.0f;
    for (size_t i = 256 * b; i < 256 * b + 256; ++i) amax = std::max(amax, std::fabs(x[i]));
    const float d = amax / 127.0f;
    for (size_t i = 256 * b; i < 256 * b + 256; ++i) {
      ASSERT_LE(std::fabs(y[i] - x[i]), 0.5f * d * (1 + 1e-6f)) << i;
    }
  }
}

}  // namespace
}  // namespace tg
