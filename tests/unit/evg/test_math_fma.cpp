// The activation math compiled as 16-lane JIT kernels compile it: under the AVX-512 target, with
// FMA, where GCC contracts `a * b + c` in C++ unless told otherwise. Lane counts must still agree
// bit for bit (test_functional.cpp checks the same on the baseline, which has no FMA).
// Nothing from tilegraph/evg may be included before the target pragma: the templates take the
// target in force where they are defined.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")
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

TG_EVG_DIAGNOSTICS_POP

}  // namespace
}  // namespace tg::evg::test

#pragma GCC pop_options

namespace tg::evg::test {
namespace {

std::vector<float> wide_inputs() {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> x = {0.0f, -0.0f, inf, -inf, std::numeric_limits<float>::quiet_NaN(), 88.72f, -87.4f, -103.9f};
  std::mt19937 rng(11);
  for (const float range : {1.0f, 12.0f, 110.0f}) {
    std::uniform_real_distribution<float> dist(-range, range);
    for (int i = 0; i < 40000; ++i) x.push_back(dist(rng));
  }
  while (x.size() % 16 != 0) x.push_back(0.5f);
  return x;
}

TEST(EvgMathFma, LaneCountsAgreeBitForBitUnderAvx512) {
  if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512bw") || !__builtin_cpu_supports("avx512vl") ||
      !__builtin_cpu_supports("avx512dq") || !__builtin_cpu_supports("f16c")) {
    GTEST_SKIP() << "no AVX-512 on this CPU";
  }
  const std::vector<float> x = wide_inputs();
  EXPECT_EQ(lane_counts_disagree(fn::Exp{}, x), "") << "exp";
  EXPECT_EQ(lane_counts_disagree(fn::GELU{}, x), "") << "gelu";
  EXPECT_EQ(lane_counts_disagree(fn::GELUErf{}, x), "") << "gelu_erf";
  EXPECT_EQ(lane_counts_disagree(fn::SiLU{}, x), "") << "silu";
  EXPECT_EQ(lane_counts_disagree(fn::Sigmoid{}, x), "") << "sigmoid";
  EXPECT_EQ(lane_counts_disagree(fn::Tanh{}, x), "") << "tanh";
}

}  // namespace
}  // namespace tg::evg::test
