// VisitorCast's conversions, bit-exact against scalar models that pick between the two
// neighbouring representable values with exact double arithmetic; and, where they overlap,
// against tg::f32_to_f16 / f32_to_bf16 and the CPU's F16C instructions.
#include <gtest/gtest.h>

#include <immintrin.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "tilegraph/core/dtype.h"
#include "tilegraph/evg/numeric/convert.h"

namespace tg::evg::test {
namespace {

using numeric::convert_lanes;

// ---- scalar models ----

// Picks lo or hi (magnitudes, lo < x < hi) for |x| given the mode; `lo_odd`/`hi_odd` say which
// has an odd last bit.
template <class Bits>
Bits pick(RoundMode mode, bool negative, double ax, double lo, double hi, Bits lo_bits, Bits hi_bits) {
  const double mid = (lo + hi) / 2;  // exact: both have few significant bits
  const bool lo_odd = lo_bits & 1;
  switch (mode) {
    case RoundMode::kNearestEven: return ax < mid ? lo_bits : ax > mid ? hi_bits : (lo_odd ? hi_bits : lo_bits);
    case RoundMode::kNearestAway: return ax < mid ? lo_bits : hi_bits;
    case RoundMode::kTowardZero: return lo_bits;
    case RoundMode::kTowardPosInf: return negative ? lo_bits : hi_bits;
    case RoundMode::kTowardNegInf: return negative ? hi_bits : lo_bits;
    case RoundMode::kAwayFromZero: return hi_bits;
    case RoundMode::kToOdd: return lo_odd ? lo_bits : hi_bits;
  }
  return lo_bits;
}

double f16_value(uint16_t bits) {  // non-negative finite halves
  const int exponent = (bits >> 10) & 0x1f;
  const int mantissa = bits & 0x3ff;
  return exponent == 0 ? std::ldexp(double(mantissa), -24) : std::ldexp(double(1024 + mantissa), exponent - 25);
}

// The 16-bit format with largest finite magnitude pattern `max_finite` and values `value(bits)`
// increasing with the bits; the pattern after max_finite is inf, worth `overflow_value` when
// deciding.
template <class ValueFn>
uint16_t model_to_16(float x, RoundMode mode, uint16_t max_finite, double overflow_value, uint16_t quiet_nan,
                     ValueFn value) {
  const uint32_t u = std::bit_cast<uint32_t>(x);
  const uint16_t sign = uint16_t((u >> 16) & 0x8000u);
  if (std::isnan(x)) return uint16_t(sign | quiet_nan);
  if (std::isinf(x)) return uint16_t(sign | (max_finite + 1));
  const double ax = std::fabs(double(x));
  // Largest finite pattern not above |x|.
  uint32_t lo = 0, hi = max_finite;
  while (lo < hi) {
    const uint32_t mid = (lo + hi + 1) / 2;
    if (value(uint16_t(mid)) <= ax)
      lo = mid;
    else
      hi = mid - 1;
  }
  const double lo_value = value(uint16_t(lo));
  if (lo_value == ax) return uint16_t(sign | lo);
  const double hi_value = lo == max_finite ? overflow_value : value(uint16_t(lo + 1));
  return uint16_t(sign | pick<uint16_t>(mode, sign != 0, ax, lo_value, hi_value, uint16_t(lo), uint16_t(lo + 1)));
}

// Values of the non-negative finite patterns, computed once.
const std::vector<double>& value_table(bool bf16) {
  static const std::vector<double> tables[2] = {[] {
                                                  std::vector<double> t(0x7c00);
                                                  for (uint32_t b = 0; b < t.size(); ++b) t[b] = f16_value(uint16_t(b));
                                                  return t;
                                                }(),
                                                [] {
                                                  std::vector<double> t(0x7f80);
                                                  for (uint32_t b = 0; b < t.size(); ++b)
                                                    t[b] = double(std::bit_cast<float>(b << 16));
                                                  return t;
                                                }()};
  return tables[bf16 ? 1 : 0];
}

uint16_t model_f32_to_f16(float x, RoundMode mode) {
  const uint32_t u = std::bit_cast<uint32_t>(x);
  const std::vector<double>& table = value_table(false);
  return model_to_16(x, mode, 0x7bff, 65536.0, uint16_t(0x7e00u | ((u >> 13) & 0x3ffu)),
                     [&](uint16_t bits) { return table[bits]; });
}

uint16_t model_f32_to_bf16(float x, RoundMode mode) {
  const uint32_t u = std::bit_cast<uint32_t>(x);
  const std::vector<double>& table = value_table(true);
  return model_to_16(x, mode, 0x7f7f, std::ldexp(1.0, 128), uint16_t(((u >> 16) & 0x7fffu) | 0x40u),
                     [&](uint16_t bits) { return table[bits]; });
}

template <class Int>
Int model_f32_to_int(float x, RoundMode mode) {
  if (std::isnan(x)) return 0;
  const double d = x;
  const double fl = std::floor(d), ce = std::ceil(d);
  double r = fl;
  if (fl != ce) {
    const bool negative = d < 0;
    const double lo = negative ? ce : fl, hi = negative ? fl : ce;  // by magnitude
    const auto odd = [](double v) { return std::fmod(std::fabs(v), 2.0) == 1.0; };
    const double ax = std::fabs(d);
    const double mid = (std::fabs(lo) + std::fabs(hi)) / 2;
    switch (mode) {
      case RoundMode::kNearestEven: r = ax < mid ? lo : ax > mid ? hi : (odd(lo) ? hi : lo); break;
      case RoundMode::kNearestAway: r = ax < mid ? lo : hi; break;
      case RoundMode::kTowardZero: r = lo; break;
      case RoundMode::kTowardPosInf: r = ce; break;
      case RoundMode::kTowardNegInf: r = fl; break;
      case RoundMode::kAwayFromZero: r = hi; break;
      case RoundMode::kToOdd: r = odd(lo) ? lo : hi; break;
    }
  }
  if (r < double(std::numeric_limits<Int>::min())) return std::numeric_limits<Int>::min();
  if (r > double(std::numeric_limits<Int>::max())) return std::numeric_limits<Int>::max();
  return Int(r);
}

float model_i32_to_f32(int32_t x, RoundMode mode) {
  const int64_t a = x < 0 ? -int64_t(x) : int64_t(x);
  const bool negative = x < 0;
  float lo = float(double(a));  // some float near a (a < 2^31 converts to double exactly)
  if (double(lo) > double(a)) lo = std::nextafter(lo, 0.0f);
  float result = lo;
  if (double(lo) != double(a)) {
    const float hi = std::nextafter(lo, std::numeric_limits<float>::infinity());
    result = std::bit_cast<float>(
        pick<uint32_t>(mode, negative, double(a), lo, hi, std::bit_cast<uint32_t>(lo), std::bit_cast<uint32_t>(hi)));
  }
  return negative ? -result : result;
}

// ---- inputs ----

std::vector<float> f32_inputs() {
  std::vector<float> v;
  const float inf = std::numeric_limits<float>::infinity();
  for (float x : {0.0f,
                  1.0f,
                  0.5f,
                  1.5f,
                  2.5f,
                  3.5f,
                  127.5f,
                  128.5f,
                  -128.5f,
                  -129.0f,
                  126.5f,
                  255.0f,
                  2147483520.0f,
                  2147483648.0f,
                  -2147483648.0f,
                  -2147483904.0f,
                  8388607.5f,
                  8388608.0f,
                  16777217.0f,
                  65504.0f,
                  65519.0f,
                  65520.0f,
                  65535.0f,
                  65536.0f,
                  1e10f,
                  1e-10f,
                  1e-30f,
                  5.96e-8f,
                  2.98e-8f,
                  6.1e-5f,
                  3.4e38f,
                  inf,
                  std::numeric_limits<float>::denorm_min(),
                  std::numeric_limits<float>::min(),
                  std::numeric_limits<float>::max(),
                  std::numeric_limits<float>::quiet_NaN(),
                  std::bit_cast<float>(0x7f800001u),
                  std::bit_cast<float>(0x7fc12345u)}) {
    v.push_back(x);
    v.push_back(-x);
  }
  // Every half, the midpoints to its neighbour, and one f32 ulp either side of each.
  for (uint32_t h = 0; h < 0x7c00; ++h) {
    const double here = f16_value(uint16_t(h));
    const double next = h == 0x7bff ? 65536.0 : f16_value(uint16_t(h + 1));
    for (double d : {here, (here + next) / 2}) {
      const float f = float(d);
      for (float x : {f, std::nextafter(f, 0.0f), std::nextafter(f, inf)}) {
        v.push_back(x);
        v.push_back(-x);
      }
    }
  }
  // Halfway and near-halfway values for the integer conversions, at every magnitude.
  for (int e = -3; e < 32; ++e) {
    const float base = std::ldexp(1.0f, e);
    for (float x :
         {base, base + 0.5f, base - 0.5f, std::nextafter(base + 0.5f, inf), std::nextafter(base + 0.5f, 0.0f)}) {
      v.push_back(x);
      v.push_back(-x);
    }
  }
  std::mt19937 rng(11);
  for (int i = 0; i < 50000; ++i) v.push_back(std::bit_cast<float>(uint32_t(rng())));
  std::uniform_real_distribution<float> small(-300.0f, 300.0f);
  for (int i = 0; i < 20000; ++i) v.push_back(small(rng));
  while (v.size() % 16) v.push_back(0.0f);
  return v;
}

std::vector<int32_t> i32_inputs() {
  std::vector<int32_t> v = {0,           1,          -1,         16777216,  16777217,   16777218,
                            16777219,    -16777217,  33554431,   33554433,  2147483647, -2147483647 - 1,
                            -2147483647, 2147483520, 2147483584, 2147483583};
  for (int e = 0; e < 31; ++e) {
    for (int64_t d : {-3, -2, -1, 0, 1, 2, 3}) {
      const int64_t x = (int64_t(1) << e) + d;
      if (x <= INT32_MAX && x >= INT32_MIN) {
        v.push_back(int32_t(x));
        v.push_back(int32_t(-x));
      }
    }
  }
  std::mt19937 rng(12);
  for (int i = 0; i < 100000; ++i) v.push_back(int32_t(rng()) >> (rng() % 24));
  while (v.size() % 16) v.push_back(0);
  return v;
}

// ---- running the lane conversions on arrays ----

template <class To, class From, RoundMode Mode, int W>
std::vector<LaneOf<To>> convert_all(const std::vector<LaneOf<From>>& in) {
  std::vector<LaneOf<To>> out(in.size());
  for (size_t i = 0; i < in.size(); i += W) {
    simd::store<W>(out.data() + i, convert_lanes<To, From, Mode, W>(simd::load<W>(in.data() + i)));
  }
  return out;
}

template <class T>
uint64_t bits_of(T x) {
  uint64_t bits = 0;
  std::memcpy(&bits, &x, sizeof x);
  return bits;
}

template <class To, class From, RoundMode Mode, class Model>
void expect_matches_model(const std::vector<LaneOf<From>>& in, Model model) {
  const auto w1 = convert_all<To, From, Mode, 1>(in);
  const auto w4 = convert_all<To, From, Mode, 4>(in);
  const auto w16 = convert_all<To, From, Mode, 16>(in);
  int failures = 0;
  for (size_t i = 0; i < in.size() && failures < 5; ++i) {
    const auto expected = model(in[i]);
    const bool ok = std::bit_cast<LaneOf<To>>(expected) == w1[i] && w1[i] == w4[i] && w1[i] == w16[i];
    if (!ok) {
      ++failures;
      ADD_FAILURE() << ElementTraits<From>::kName << " -> " << ElementTraits<To>::kName << " " << round_mode_name(Mode)
                    << ": input bits 0x" << std::hex << bits_of(in[i]) << " expected 0x" << bits_of(expected)
                    << " got 0x" << bits_of(w1[i]) << " / 0x" << bits_of(w4[i]) << " / 0x" << bits_of(w16[i])
                    << " (W = 1 / 4 / 16)";
    }
  }
}

template <RoundMode Mode>
void check_all_from_f32(const std::vector<float>& in) {
  expect_matches_model<tg::f16, float, Mode>(in, [](float x) { return model_f32_to_f16(x, Mode); });
  expect_matches_model<tg::bf16, float, Mode>(in, [](float x) { return model_f32_to_bf16(x, Mode); });
  expect_matches_model<int32_t, float, Mode>(in, [](float x) { return model_f32_to_int<int32_t>(x, Mode); });
  expect_matches_model<int8_t, float, Mode>(in, [](float x) { return model_f32_to_int<int8_t>(x, Mode); });
}

TEST(EvgConvert, FromF32EveryModeMatchesTheModel) {
  const std::vector<float> in = f32_inputs();
  check_all_from_f32<RoundMode::kNearestEven>(in);
  check_all_from_f32<RoundMode::kNearestAway>(in);
  check_all_from_f32<RoundMode::kTowardZero>(in);
  check_all_from_f32<RoundMode::kTowardPosInf>(in);
  check_all_from_f32<RoundMode::kTowardNegInf>(in);
  check_all_from_f32<RoundMode::kAwayFromZero>(in);
  check_all_from_f32<RoundMode::kToOdd>(in);
}

template <RoundMode Mode>
void check_i32(const std::vector<int32_t>& in) {
  expect_matches_model<float, int32_t, Mode>(in, [](int32_t x) { return model_i32_to_f32(x, Mode); });
}

TEST(EvgConvert, I32ToF32EveryModeMatchesTheModel) {
  const std::vector<int32_t> in = i32_inputs();
  check_i32<RoundMode::kNearestEven>(in);
  check_i32<RoundMode::kNearestAway>(in);
  check_i32<RoundMode::kTowardZero>(in);
  check_i32<RoundMode::kTowardPosInf>(in);
  check_i32<RoundMode::kTowardNegInf>(in);
  check_i32<RoundMode::kAwayFromZero>(in);
  check_i32<RoundMode::kToOdd>(in);
}

TEST(EvgConvert, NearestEvenAgreesWithCoreConversions) {
  const std::vector<float> in = f32_inputs();
  const auto f16 = convert_all<tg::f16, float, RoundMode::kNearestEven, 4>(in);
  const auto bf16 = convert_all<tg::bf16, float, RoundMode::kNearestEven, 4>(in);
  for (size_t i = 0; i < in.size(); ++i) {
    ASSERT_EQ(f16[i], tg::f32_to_f16(in[i]).bits) << "input " << in[i];
    ASSERT_EQ(bf16[i], tg::f32_to_bf16(in[i]).bits) << "input " << in[i];
  }
}

TEST(EvgConvert, WideningIsExactForEveryPattern) {
  std::vector<uint16_t> all(65536);
  for (uint32_t i = 0; i < 65536; ++i) all[i] = uint16_t(i);
  const auto w1 = convert_all<float, tg::f16, RoundMode::kNearestEven, 1>(all);
  const auto w16 = convert_all<float, tg::f16, RoundMode::kNearestEven, 16>(all);
  const auto b4 = convert_all<float, tg::bf16, RoundMode::kNearestEven, 4>(all);
  for (uint32_t i = 0; i < 65536; ++i) {
    const uint32_t expected = std::bit_cast<uint32_t>(tg::f16_to_f32(tg::f16{uint16_t(i)}));
    ASSERT_EQ(std::bit_cast<uint32_t>(w1[i]), expected) << "half 0x" << std::hex << i;
    ASSERT_EQ(std::bit_cast<uint32_t>(w16[i]), expected) << "half 0x" << std::hex << i;
    ASSERT_EQ(std::bit_cast<uint32_t>(b4[i]), i << 16) << "bf16 0x" << std::hex << i;
  }
  std::vector<int8_t> bytes(256);
  for (int i = 0; i < 256; ++i) bytes[size_t(i)] = int8_t(i - 128);
  const auto f = convert_all<float, int8_t, RoundMode::kNearestEven, 16>(bytes);
  for (int i = 0; i < 256; ++i) ASSERT_EQ(f[size_t(i)], float(i - 128));
}

__attribute__((target("f16c"))) uint16_t f16c_convert(float x, int mode) {
  switch (mode) {
    case 0: return uint16_t(_cvtss_sh(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    case 1: return uint16_t(_cvtss_sh(x, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC));
    case 2: return uint16_t(_cvtss_sh(x, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC));
    default: return uint16_t(_cvtss_sh(x, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC));
  }
}

TEST(EvgConvert, DirectedModesAgreeWithF16C) {
  if (!__builtin_cpu_supports("f16c")) GTEST_SKIP() << "no F16C on this CPU";
  const std::vector<float> in = f32_inputs();
  const auto rne = convert_all<tg::f16, float, RoundMode::kNearestEven, 4>(in);
  const auto rd = convert_all<tg::f16, float, RoundMode::kTowardNegInf, 4>(in);
  const auto ru = convert_all<tg::f16, float, RoundMode::kTowardPosInf, 4>(in);
  const auto rz = convert_all<tg::f16, float, RoundMode::kTowardZero, 4>(in);
  for (size_t i = 0; i < in.size(); ++i) {
    if (std::isnan(in[i])) continue;  // F16C keeps NaN payloads its own way
    ASSERT_EQ(rne[i], f16c_convert(in[i], 0)) << "rne " << in[i];
    ASSERT_EQ(rd[i], f16c_convert(in[i], 1)) << "rd " << in[i];
    ASSERT_EQ(ru[i], f16c_convert(in[i], 2)) << "ru " << in[i];
    ASSERT_EQ(rz[i], f16c_convert(in[i], 3)) << "rz " << in[i];
  }
}

TEST(EvgConvert, SaturationAndSpecialValuesAsDocumented) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> in = {1e6f,   -1e6f,   inf,    -inf,    std::numeric_limits<float>::quiet_NaN(),
                                 300.0f, -300.0f, 127.5f, -128.5f, 3e9f,
                                 -3e9f,  0.0f,    0.0f,   0.0f,    0.0f,
                                 0.0f};
  const auto h_rne = convert_all<tg::f16, float, RoundMode::kNearestEven, 4>(in);
  const auto h_rz = convert_all<tg::f16, float, RoundMode::kTowardZero, 4>(in);
  const auto h_ru = convert_all<tg::f16, float, RoundMode::kTowardPosInf, 4>(in);
  EXPECT_EQ(h_rne[0], 0x7c00);           // overflow to inf
  EXPECT_EQ(h_rz[0], 0x7bff);            // largest finite
  EXPECT_EQ(h_ru[1], 0xfbff);            // -65504: rounding up never reaches -inf
  EXPECT_EQ(h_rz[2], 0x7c00);            // inf stays inf
  EXPECT_EQ(h_rne[4] & 0x7e00, 0x7e00);  // NaN stays a quiet NaN
  const auto i8 = convert_all<int8_t, float, RoundMode::kNearestEven, 4>(in);
  EXPECT_EQ(i8[5], 127);
  EXPECT_EQ(i8[6], -128);
  EXPECT_EQ(i8[7], 127);  // 127.5 rounds to 128, saturates
  EXPECT_EQ(i8[8], -128);
  EXPECT_EQ(i8[4], 0);  // NaN
  const auto i32 = convert_all<int32_t, float, RoundMode::kNearestEven, 4>(in);
  EXPECT_EQ(i32[9], INT32_MAX);
  EXPECT_EQ(i32[10], INT32_MIN);
  EXPECT_EQ(i32[2], INT32_MAX);
  EXPECT_EQ(i32[3], INT32_MIN);
  EXPECT_EQ(i32[4], 0);
}

}  // namespace
}  // namespace tg::evg::test
