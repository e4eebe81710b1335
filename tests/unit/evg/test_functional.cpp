// The compute and reduction functors against double-precision references, and lane-count
// independence: every lane runs the same operations, so W = 1, 4 and 16 agree bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "evg/evg_test_utils.h"
#include "tilegraph/evg/fusion/functional.h"

namespace tg::evg::test {
namespace {

std::vector<float> inputs(float lo, float hi) {
  std::vector<float> v = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, -0.5f, 1e-30f, -1e-30f, 1e-40f};
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> dist(lo, hi);
  while (v.size() < 4096) v.push_back(dist(rng));
  return v;
}

template <int W, class Fn>
std::vector<float> apply_unary(const Fn& fn, const std::vector<float>& x) {
  std::vector<float> y(x.size());
  for (size_t i = 0; i < x.size(); i += W) simd::store<W>(y.data() + i, fn(simd::load<W>(x.data() + i)));
  return y;
}

template <class Fn>
void check_unary(const Fn& fn, double (*reference)(double), float lo, float hi, double rel_tol, double abs_tol) {
  const std::vector<float> x = inputs(lo, hi);
  const std::vector<float> y1 = apply_unary<1>(fn, x);
  std::vector<double> ref(x.size());
  // Rounded to f32, so results that underflow or overflow in f32 compare as they should.
  for (size_t i = 0; i < x.size(); ++i) ref[i] = float(reference(x[i]));
  EXPECT_EQ(compare(y1, ref, rel_tol, abs_tol), "") << Fn::kName;
  EXPECT_EQ(compare_bits(y1, apply_unary<4>(fn, x)), "") << Fn::kName << " W=4";
  EXPECT_EQ(compare_bits(y1, apply_unary<16>(fn, x)), "") << Fn::kName << " W=16";
}

// 0.5 x (1 + tanh(u)) == x / (1 + exp(-2u)), the form that does not cancel in double either.
double gelu_tanh(double x) { return x / (1 + std::exp(-2 * 0.7978845608028654 * (x + 0.044715 * x * x * x))); }
double gelu_erf(double x) { return 0.5 * x * std::erfc(-x / std::sqrt(2.0)); }
double silu(double x) { return x / (1 + std::exp(-x)); }
double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

TEST(EvgFunctional, UnaryActivationsMatchDoubleReferences) {
  check_unary(
      fn::ReLU{}, [](double x) { return x > 0 ? x : 0.0; }, -10, 10, 0, 0);
  check_unary(
      fn::Negate{}, [](double x) { return -x; }, -10, 10, 0, 0);
  check_unary(
      fn::Absolute{}, [](double x) { return std::fabs(x); }, -10, 10, 0, 0);
  check_unary(
      fn::Square{}, [](double x) { return x * x; }, -10, 10, 1e-7, 0);
  check_unary(
      fn::Exp{}, [](double x) { return std::exp(x); }, -100, 88, 4e-7, 1e-44);
  check_unary(
      fn::Tanh{}, [](double x) { return std::tanh(x); }, -12, 12, 1e-6, 1e-7);
  check_unary(fn::Sigmoid{}, sigmoid, -30, 30, 1e-6, 0);
  check_unary(fn::SiLU{}, silu, -30, 30, 1e-6, 0);
  // For x << 0 the f32 argument of exp (about -2u) carries ~1e-7 relative error, which becomes
  // ~1e-5 relative error of the (tiny) result: inherent to evaluating in f32.
  check_unary(fn::GELU{}, gelu_tanh, -10, 10, 1e-5, 1e-30);
  // Below -5 the f32 rounding of x^2 inside exp(-x^2 / 2) costs up to ~1e-5 relative.
  check_unary(fn::GELUErf{}, gelu_erf, -9, 9, 1e-5, 1e-30);
  check_unary(
      fn::Scale{{2.5f}}, [](double x) { return 2.5 * x; }, -10, 10, 1e-7, 0);
  check_unary(
      fn::LeakyReLU{{0.125f}}, [](double x) { return x > 0 ? x : 0.125 * x; }, -10, 10, 0, 0);
  check_unary(
      fn::Clamp{{-0.5f, 2.0f}}, [](double x) { return std::fmin(std::fmax(x, -0.5), 2.0); }, -10, 10, 0, 0);
}

TEST(EvgFunctional, SpecialValues) {
  using V = simd::Vec<float, 4>;
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const V x = {inf, -inf, nan, 200.0f};
  const V e = fn::Exp{}(x);
  EXPECT_EQ(e[0], inf);
  EXPECT_EQ(e[1], 0.0f);
  EXPECT_TRUE(std::isnan(e[2]));
  EXPECT_EQ(e[3], inf);
  const V t = fn::Tanh{}(x);
  EXPECT_EQ(t[0], 1.0f);
  EXPECT_EQ(t[1], -1.0f);
  EXPECT_TRUE(std::isnan(t[2]));
  const V s = fn::Sigmoid{}(x);
  EXPECT_EQ(s[0], 1.0f);
  EXPECT_EQ(s[1], 0.0f);
  const V r = fn::ReLU{}(x);
  EXPECT_EQ(r[2], 0.0f);  // as the reference op: NaN > 0 is false
  const V g = fn::GELU{}(V{-20.0f, 20.0f, 0.0f, -0.0f});
  EXPECT_EQ(g[0], -0.0f);
  EXPECT_EQ(g[1], 20.0f);
  // The limits at the infinities, not inf * 0.
  for (const V e : {fn::GELU{}(V{inf, -inf, 30.0f, -30.0f}), fn::GELUErf{}(V{inf, -inf, 30.0f, -30.0f})}) {
    EXPECT_EQ(e[0], inf);
    EXPECT_EQ(e[1], 0.0f);
    EXPECT_TRUE(std::signbit(e[1]));
    EXPECT_EQ(e[2], 30.0f);
    EXPECT_TRUE(e[3] == 0.0f && std::signbit(e[3]));
  }
  // max/min propagate NaN from either side, so folds do not depend on order.
  EXPECT_TRUE(std::isnan(fn::Maximum{}(V{nan, 1, 1, 1}, V{1, 1, 1, 1})[0]));
  EXPECT_TRUE(std::isnan(fn::Maximum{}(V{1, 1, 1, 1}, V{nan, 1, 1, 1})[0]));
  EXPECT_TRUE(std::isnan(fn::Minimum{}(V{1, 1, 1, 1}, V{nan, 1, 1, 1})[0]));
  EXPECT_TRUE(std::isnan(reduce::Max{}(V{-inf, 1, 1, 1}, V{nan, 1, 1, 1})[0]));
}

TEST(EvgFunctional, BinaryAndTernary) {
  const std::vector<float> a = inputs(-5, 5), b = inputs(0.5f, 3);
  std::vector<float> out(a.size());
  const auto run2 = [&](auto fn, double (*ref)(double, double)) {
    std::vector<double> expected(a.size());
    for (size_t i = 0; i < a.size(); i += 4) {
      simd::store<4>(out.data() + i, fn(simd::load<4>(a.data() + i), simd::load<4>(b.data() + i)));
    }
    for (size_t i = 0; i < a.size(); ++i) expected[i] = float(ref(a[i], b[i]));
    EXPECT_EQ(compare(out, expected, 1e-7, 0), "") << decltype(fn)::kName;
  };
  run2(fn::Plus{}, [](double x, double y) { return x + y; });
  run2(fn::Minus{}, [](double x, double y) { return x - y; });
  run2(fn::Multiplies{}, [](double x, double y) { return x * y; });
  run2(fn::Divides{}, [](double x, double y) { return x / y; });
  run2(fn::Maximum{}, [](double x, double y) { return std::fmax(x, y); });
  run2(fn::Minimum{}, [](double x, double y) { return std::fmin(x, y); });
  std::vector<double> expected(a.size());
  for (size_t i = 0; i < a.size(); i += 4) {
    const auto va = simd::load<4>(a.data() + i), vb = simd::load<4>(b.data() + i);
    simd::store<4>(out.data() + i, fn::MultiplyAdd{}(va, vb, va));
  }
  for (size_t i = 0; i < a.size(); ++i) expected[i] = double(a[i]) * b[i] + a[i];
  EXPECT_EQ(compare(out, expected, 1e-6, 1e-6), "");
}

}  // namespace
}  // namespace tg::evg::test
