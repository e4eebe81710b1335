// The activation math compiled as 16-lane JIT kernels compile it: under the AVX-512 target, with
// FMA, where GCC contracts `a * b + c` in C++ unless told otherwise. Lane counts must still agree
// bit for bit (test_functional.cpp checks the same on the baseline, which has no FMA), the table
// lookup (AVX-512 and AVX2 permutes, element reads elsewhere) included; and exp and gelu meet
// their documented accuracy.
// Nothing from tilegraph/evg may be included before the target pragma: the templates take the
// target in force where they are defined.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")
// As a 16-lane JIT kernel names its ISA (the pragma defines no __AVX512F__ in C++), so the
// AVX-512 lookup is the one under test at 16 lanes.
#define TG_EVG_JIT_TARGET_AVX512 1
#include "tilegraph/evg/fusion/functional.h"

namespace tg::evg::test {
namespace {

TG_EVG_DIAGNOSTICS_PUSH

template <int W, class Fn>
std::vector<float> apply_fma_target(const Fn& fn, const std::vector<float>& x) {
  std::vector<float> y(x.size());
  for (size_t i = 0; i < x.size(); i += W) simd::store<W>(y.data() + i, fn(simd::load<W>(x.data() + i)));
  return y;
}

std::string exact(float v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", double(v));
  return text;
}

// "" if W = 1, 4, 8 and 16 give the same bits; else the first input where they differ.
template <class Fn>
std::string lane_counts_disagree(const Fn& fn, const std::vector<float>& x) {
  const std::vector<float> y1 = apply_fma_target<1>(fn, x);
  const std::vector<float> wider[] = {apply_fma_target<4>(fn, x), apply_fma_target<8>(fn, x),
                                      apply_fma_target<16>(fn, x)};
  for (const std::vector<float>& y : wider) {
    for (size_t i = 0; i < x.size(); ++i) {
      if (std::memcmp(&y1[i], &y[i], 4) != 0) {
        return "x=" + exact(x[i]) + ": W=1 " + exact(y1[i]) + ", wider " + exact(y[i]);
      }
    }
  }
  return "";
}

// simd::lookup at W lanes, every lane from its own index.
template <int W, int N>
std::vector<float> lookup_lanes(const float (&table)[N], const std::vector<int32_t>& index) {
  std::vector<float> y(index.size());
  for (size_t i = 0; i < index.size(); i += W) {
    simd::store<W>(y.data() + i, simd::lookup(table, simd::load<W>(index.data() + i)));
  }
  return y;
}

float exp_fma_target(float x) { return math::exp(simd::Vec<float, 1>{x})[0]; }
float gelu_fma_target(float x) { return math::gelu_tanh(simd::Vec<float, 1>{x})[0]; }

TG_EVG_DIAGNOSTICS_POP

}  // namespace
}  // namespace tg::evg::test

#pragma GCC pop_options

namespace tg::evg::test {
namespace {

bool has_avx512() {
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("f16c");
}

std::vector<float> wide_inputs() {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> x = {0.0f,
                          -0.0f,
                          inf,
                          -inf,
                          std::numeric_limits<float>::quiet_NaN(),
                          88.72f,
                          -87.4f,
                          -103.9f,
                          -104.0f,
                          89.0f,
                          1e-30f,
                          -1e-30f,
                          1e-40f,
                          -1e-40f,
                          std::numeric_limits<float>::max(),
                          -std::numeric_limits<float>::max()};
  // Where k = round(16 x / ln2) changes (table index and scale), and just beside.
  for (int k = -2400; k <= 2050; k += 7) {
    const float boundary = float((k + 0.5) * std::log(2.0) / 16);
    x.push_back(boundary);
    x.push_back(std::nextafter(boundary, -inf));
    x.push_back(std::nextafter(boundary, inf));
  }
  std::mt19937 rng(11);
  for (const float range : {1.0f, 12.0f, 110.0f}) {
    std::uniform_real_distribution<float> dist(-range, range);
    for (int i = 0; i < 40000; ++i) x.push_back(dist(rng));
  }
  while (x.size() % 16 != 0) x.push_back(0.5f);
  return x;
}

TEST(EvgMathFma, LaneCountsAgreeBitForBitUnderAvx512) {
  if (!has_avx512()) GTEST_SKIP() << "no AVX-512 on this CPU";
  const std::vector<float> x = wide_inputs();
  EXPECT_EQ(lane_counts_disagree(fn::Exp{}, x), "") << "exp";
  EXPECT_EQ(lane_counts_disagree(fn::GELU{}, x), "") << "gelu";
  EXPECT_EQ(lane_counts_disagree(fn::GELUErf{}, x), "") << "gelu_erf";
  EXPECT_EQ(lane_counts_disagree(fn::SiLU{}, x), "") << "silu";
  EXPECT_EQ(lane_counts_disagree(fn::Sigmoid{}, x), "") << "sigmoid";
  EXPECT_EQ(lane_counts_disagree(fn::Tanh{}, x), "") << "tanh";
}

TEST(EvgMathFma, LookupReadsEachLanesEntryAtEveryLaneCount) {
  if (!has_avx512()) GTEST_SKIP() << "no AVX-512 on this CPU";
  alignas(64) float table16[16], table32[32];
  for (int i = 0; i < 16; ++i) table16[i] = 100.0f + float(i);
  for (int i = 0; i < 32; ++i) table32[i] = 1.5f * float(i) - 7.0f;
  std::mt19937 rng(3);
  std::uniform_int_distribution<int32_t> any_index(std::numeric_limits<int32_t>::min(),
                                                   std::numeric_limits<int32_t>::max());
  std::vector<int32_t> index = {0, 1, 15, 16, 31, 32, -1, -16, -17, std::numeric_limits<int32_t>::min()};
  while (index.size() < 4096) index.push_back(index.size() % 2 ? int32_t(index.size() % 37) : any_index(rng));
  for (const auto& [size, y1, y4, y8, y16] :
       {std::tuple{16, lookup_lanes<1>(table16, index), lookup_lanes<4>(table16, index),
                   lookup_lanes<8>(table16, index), lookup_lanes<16>(table16, index)},
        std::tuple{32, lookup_lanes<1>(table32, index), lookup_lanes<4>(table32, index),
                   lookup_lanes<8>(table32, index), lookup_lanes<16>(table32, index)}}) {
    for (size_t i = 0; i < index.size(); ++i) {
      const float want = size == 16 ? table16[index[i] & 15] : table32[index[i] & 31];
      ASSERT_EQ(y1[i], want) << size << " entries, index " << index[i];
      ASSERT_EQ(y4[i], want) << size << " entries, W=4, index " << index[i];
      ASSERT_EQ(y8[i], want) << size << " entries, W=8, index " << index[i];
      ASSERT_EQ(y16[i], want) << size << " entries, W=16, index " << index[i];
    }
  }
}

// Error of a float result in units of the last place of the exact value (f32 spacing there;
// subnormal spacing below 2^-126).
double ulps(float got, double want) {
  if (want > double(std::numeric_limits<float>::max())) return std::isinf(got) ? 0.0 : 1e30;
  const double spacing = std::ldexp(1.0, std::max(std::ilogb(want), -126) - 23);
  return std::fabs(double(got) - want) / spacing;
}

TEST(EvgMathFma, ExpIsWithinItsDocumentedUlps) {
  if (!has_avx512()) GTEST_SKIP() << "no AVX-512 on this CPU";
  std::mt19937 rng(8);
  std::uniform_real_distribution<float> dist(-104.0f, 89.0f);
  double worst = 0;
  float worst_x = 0;
  for (int i = 0; i < 2000000; ++i) {
    const float x = i % 2 ? dist(rng) : dist(rng) / 64.0f;
    const double e = ulps(exp_fma_target(x), std::exp(double(x)));
    if (e > worst) worst = e, worst_x = x;
  }
  EXPECT_LE(worst, 1.1) << "at x = " << exact(worst_x);
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(exp_fma_target(inf), inf);
  EXPECT_EQ(exp_fma_target(-inf), 0.0f);
  EXPECT_EQ(exp_fma_target(89.0f), inf);
  EXPECT_EQ(exp_fma_target(0.0f), 1.0f);
  EXPECT_TRUE(std::isnan(exp_fma_target(std::numeric_limits<float>::quiet_NaN())));
}

// gelu (tanh form) = x / (1 + exp(-2u)), u = sqrt(2/pi) (x + 0.044715 x^3), in double.
double gelu_reference(double x) { return x / (1 + std::exp(-2 * 0.7978845608028654 * (x + 0.044715 * x * x * x))); }

// The documented contract (docs/evg-reference.md, "Math"): relative error <= 3e-7 + 2e-7 |2u(x)|.
// The second term is the f32 rounding of the exp argument -2u, which scales the tiny negative-tail
// results; there is no cancellation, so the tail stays relatively accurate down to the subnormal
// range.
double gelu_tolerance(double x) { return 3e-7 + 2e-7 * std::fabs(2 * 0.7978845608028654 * (x + 0.044715 * x * x * x)); }

TEST(EvgMathFma, GeluMeetsItsRelativeErrorContract) {
  if (!has_avx512()) GTEST_SKIP() << "no AVX-512 on this CPU";
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> wide(-11.0f, 11.0f), bulk(-3.0f, 3.0f);
  std::vector<float> x = {1e-30f, -1e-30f, 1e-40f, -1e-40f, 1e-7f, -1e-7f, 5.125f, -2.625f, 10.0f, -10.0f};
  while (x.size() < 3000000) x.push_back(x.size() % 2 ? wide(rng) : bulk(rng));
  double worst_margin = 0, worst_bulk = 0;
  float worst_x = 0;
  for (const float v : x) {
    const double want = gelu_reference(v);
    // Where -2u > 88 (x < -10.03, |gelu| < 6.1e-38) the result is -0.
    if (std::fabs(want) < 1e-37) {
      ASSERT_LE(std::fabs(gelu_fma_target(v) - want), 6.2e-38) << exact(v);
      continue;
    }
    const double rel = std::fabs(gelu_fma_target(v) - want) / std::fabs(want);
    if (rel / gelu_tolerance(v) > worst_margin) worst_margin = rel / gelu_tolerance(v), worst_x = v;
    if (v >= -1.0f) worst_bulk = std::max(worst_bulk, rel);
  }
  EXPECT_LE(worst_margin, 1.0) << "at x = " << exact(worst_x) << ": " << exact(gelu_fma_target(worst_x)) << " against "
                               << gelu_reference(worst_x);
  EXPECT_LE(worst_bulk, 3e-7) << "for x >= -1";
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(gelu_fma_target(inf), inf);
  EXPECT_EQ(gelu_fma_target(-inf), 0.0f);
  EXPECT_TRUE(std::signbit(gelu_fma_target(-inf)));
  EXPECT_EQ(gelu_fma_target(0.0f), 0.0f);
  EXPECT_TRUE(std::signbit(gelu_fma_target(-0.0f)));
  EXPECT_EQ(gelu_fma_target(-20.0f), 0.0f);
  EXPECT_EQ(gelu_fma_target(20.0f), 20.0f);
  EXPECT_EQ(gelu_fma_target(std::numeric_limits<float>::max()), std::numeric_limits<float>::max());
  EXPECT_TRUE(std::isnan(gelu_fma_target(std::numeric_limits<float>::quiet_NaN())));
}

}  // namespace
}  // namespace tg::evg::test
