// The backend's activations (VecKernels::unary, glu, exp_sum) are the EVG's math: on every ISA
// this machine runs, each element gets the bits of the one-lane EVG functor, so an op run node by
// node, a chain fused by the backend and a JIT-compiled EVG epilogue agree exactly. Inputs cover
// the range where each function changes form (gelu's tail, tanh's 0.625 switch, exp's
// subnormal and overflowing results), signed zeros, infinities and NaN (any NaN matches any
// other), and lengths that leave a partial vector.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "tilegraph/evg/fusion/functional.h"
#include "vec.h"

namespace tg::cpu {
namespace {

std::vector<float> activation_inputs() {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  std::vector<float> x = {0.0f,   -0.0f,   kInf,    -kInf,   std::numeric_limits<float>::quiet_NaN(),
                          0.625f, -0.625f, -10.03f, -10.04f, 88.0f,
                          -88.0f, 89.5f,   -104.5f, 1e-30f,  -1e-30f};
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> wide(-110.0f, 110.0f), narrow(-6.0f, 6.0f);
  for (int i = 0; i < 3000; ++i) x.push_back(i % 2 ? wide(rng) : narrow(rng));
  x.resize(x.size() + 7, 0.5f);  // not a multiple of any lane count
  return x;
}

// One lane of the EVG functor, as a JIT kernel's tail or a 1-lane kernel computes it.
template <class Fn>
float one_lane(float v) {
  return Fn{}(evg::simd::Vec<float, 1>{v})[0];
}

std::string first_difference(const std::vector<float>& want, const std::vector<float>& got,
                             const std::vector<float>& x) {
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::isnan(want[i]) && std::isnan(got[i])) continue;  // a NaN's sign and payload carry nothing
    if (std::memcmp(&want[i], &got[i], sizeof(float)) != 0) {
      char text[128];
      std::snprintf(text, sizeof text, "x=%.9g: evg %.9g, backend %.9g", double(x[i]), double(want[i]), double(got[i]));
      return text;
    }
  }
  return "";
}

template <class Fn>
void expect_unary_matches(UnaryOp op, const char* name) {
  const std::vector<float> x = activation_inputs();
  std::vector<float> want(x.size());
  for (size_t i = 0; i < x.size(); ++i) want[i] = one_lane<Fn>(x[i]);
  for (Isa isa : runnable_isas()) {
    std::vector<float> got(x.size());
    vec_kernels(isa).unary(op, int64_t(x.size()), got.data(), x.data());
    EXPECT_EQ(first_difference(want, got, x), "") << name << " on " << isa_name(isa);
  }
}

TEST(VecActivations, UnaryOpsAreTheEvgFunctorsBitForBit) {
  expect_unary_matches<evg::fn::GELU>(UnaryOp::GELU, "gelu");
  expect_unary_matches<evg::fn::GELUErf>(UnaryOp::GELU_ERF, "gelu_erf");
  expect_unary_matches<evg::fn::SiLU>(UnaryOp::SILU, "silu");
  expect_unary_matches<evg::fn::Sigmoid>(UnaryOp::SIGMOID, "sigmoid");
  expect_unary_matches<evg::fn::Tanh>(UnaryOp::TANH, "tanh");
  expect_unary_matches<evg::fn::Exp>(UnaryOp::EXP, "exp");
}

TEST(VecActivations, GluIsTheEvgActivationTimesTheGate) {
  const std::vector<float> x = activation_inputs();
  std::vector<float> g(x.size());
  for (size_t i = 0; i < g.size(); ++i) g[i] = 0.25f + float(i % 13) * 0.5f;
  for (GluOp op : {GluOp::SWIGLU, GluOp::GEGLU}) {
    std::vector<float> want(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      want[i] = (op == GluOp::SWIGLU ? one_lane<evg::fn::SiLU>(x[i]) : one_lane<evg::fn::GELU>(x[i])) * g[i];
    }
    for (Isa isa : runnable_isas()) {
      std::vector<float> got(x.size());
      vec_kernels(isa).glu(op, int64_t(x.size()), got.data(), x.data(), g.data());
      EXPECT_EQ(first_difference(want, got, x), "")
          << (op == GluOp::SWIGLU ? "swiglu" : "geglu") << " on " << isa_name(isa);
    }
  }
}

TEST(VecActivations, ExpSumTakesTheEvgExp) {
  std::vector<float> x = activation_inputs();
  x.erase(x.begin(), x.begin() + 5);  // the sum of exp over infinities and NaN says nothing
  const float shift = 3.0f;
  std::vector<float> want(x.size());
  for (size_t i = 0; i < x.size(); ++i) want[i] = one_lane<evg::fn::Exp>(x[i] - shift);
  for (Isa isa : runnable_isas()) {
    std::vector<float> got(x.size());
    vec_kernels(isa).exp_sum(int64_t(x.size()), got.data(), x.data(), shift);
    EXPECT_EQ(first_difference(want, got, x), "") << isa_name(isa);
  }
}

}  // namespace
}  // namespace tg::cpu
