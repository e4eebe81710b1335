#pragma once
// Branch-free f32 math on W-lane vectors (simd::Vec<float, W>), for the activation functors.
// Every lane runs the same instruction sequence, so a value's result does not depend on where
// it sits in a tile or on the lane count. Multiply-adds are explicit simd::fma: GCC's C++ default
// contracts `a * b + c` under FMA targets, and for a product with two uses it did so at some lane
// counts and not others. Accuracy: exp < 1 ulp, tanh ~1.4 ulp, erfc relative error ~1.2e-7
// (Numerical Recipes' Chebyshev fit) before f32 rounding.
#include <cstdint>

#include "tilegraph/evg/arch/simd.h"

TG_EVG_DIAGNOSTICS_PUSH

namespace tg::evg::math {

using simd::bit_cast;
using simd::select;

// The integer lanes matching V's float lanes.
template <class V>
using IntLanes = decltype(V{} < V{});

template <class V>
TG_EVG_INLINE V abs(V x) {
  using I = IntLanes<V>;
  return bit_cast<V>(bit_cast<I>(x) & 0x7fffffff);
}

template <class V>
TG_EVG_INLINE V copysign(V magnitude, V sign) {
  using I = IntLanes<V>;
  return bit_cast<V>((bit_cast<I>(magnitude) & 0x7fffffff) |
                     (bit_cast<I>(sign) & int32_t(0x80000000u)));
}

// max/min that return NaN if either operand is NaN, whatever the operand order, so folds
// give the same answer in any order.
template <class V>
TG_EVG_INLINE V max_nan(V a, V b) {
  return select((a > b) | (a != a), a, b);
}
template <class V>
TG_EVG_INLINE V min_nan(V a, V b) {
  return select((a < b) | (a != a), a, b);
}

// exp(x) = 2^n exp(r) with n = round(x log2 e), |r| <= ln2/2 (Cephes' reduction), and a degree-6
// polynomial for exp(r) (a Chebyshev fit, relative error 4e-9), all in FMAs: simd::fma rounds
// once per step on every lane count and ISA. Max error 0.94 ulp over 12M random inputs.
template <class V>
TG_EVG_INLINE V exp(V x) {
  using simd::fma;
  // Unsigned lanes, whose arithmetic wraps (a NaN's n is arbitrary).
  using U = simd::Vec<uint32_t, sizeof(V) / sizeof(float)>;
  // Beyond these bounds the result is 0 or inf anyway; within, n stays in [-150, 128].
  x = select(x < -104.0f, V{} - 104.0f, x);
  x = select(x > 89.0f, V{} + 89.0f, x);
  // Adding 1.5 * 2^23 rounds x log2 e to an integer n and leaves it in t's low mantissa bits.
  constexpr float kRound = 12582912.0f;
  const V t = fma(x, 1.44269504088896341f, kRound);
  const V n = t - kRound;
  const V r = fma(n, 2.12194440e-4f, fma(n, -0.693359375f, x));  // x - n ln2, ln2 in two parts
  V p = fma(r, 0x1.6d4920p-10f, 0x1.12438ep-7f);
  p = fma(p, r, 0x1.5554e4p-5f);
  p = fma(p, r, 0x1.555474p-3f);
  p = fma(p, r, 0.5f);
  p = fma(p, r, 1.0f);
  p = fma(p, r, 1.0f);  // exp(r), in [0.7, 1.42]
  // 2^n as 2^(n - b) 2^b with b = +-32, both normal, so subnormal and overflowing results round
  // once, correctly. n comes from t's bits (a NaN gives some n, and p stays NaN).
  const U biased_n = (bit_cast<U>(t) - bit_cast<U>(V{} + kRound) + 127u) << 23;
  const U b = select(n < 0.0f, U{} - (32u << 23), U{} + (32u << 23));
  return p * bit_cast<V>(biased_n - b) * bit_cast<V>(b + (127u << 23));
}

// Cephes' tanhf: an odd polynomial below 0.625, 1 - 2 / (exp(2|x|) + 1) above.
template <class V>
TG_EVG_INLINE V tanh(V x) {
  const V ax = abs(x);
  const V z = x * x;
  V p = simd::fma(z, -5.70498872745e-3f, 2.06390887954e-2f);
  p = simd::fma(p, z, -5.37397155531e-2f);
  p = simd::fma(p, z, 1.33314422036e-1f);
  p = simd::fma(p, z, -3.33332819422e-1f);
  const V small = simd::fma(p * z, x, x);
  const V large = copysign(1.0f - 2.0f / (exp(ax + ax) + 1.0f), x);
  return select(ax < 0.625f, small, large);
}

template <class V>
TG_EVG_INLINE V sigmoid(V x) {
  return 1.0f / (1.0f + exp(-x));
}

// erfc(z) for z >= 0.
template <class V>
TG_EVG_INLINE V erfc_nonnegative(V z) {
  using simd::fma;
  const V t = 1.0f / fma(z, 0.5f, 1.0f);
  V p = fma(t, 0.17087277f, -0.82215223f);
  p = fma(p, t, 1.48851587f);
  p = fma(p, t, -1.13520398f);
  p = fma(p, t, 0.27886807f);
  p = fma(p, t, -0.18628806f);
  p = fma(p, t, 0.09678418f);
  p = fma(p, t, 0.37409196f);
  p = fma(p, t, 1.00002368f);
  p = fma(p, t, -1.26551223f);
  return t * exp(fma(-z, z, p));
}

// gelu, tanh form: 0.5 x (1 + tanh(u)) == x / (1 + exp(-2u)), which does not cancel for x < 0.
template <class V>
TG_EVG_INLINE V gelu_tanh(V x) {
  // -2u = x (c1 + c2 x^2) with c1 = -2 sqrt(2 / pi), c2 = 0.044715 c1.
  const V minus_2u = x * simd::fma(x * x, -0.0713548162726f, -1.5957691216057308f);
  return x / (1.0f + exp(minus_2u));
}

// gelu, erf form: 0.5 x erfc(-x / sqrt2), with erfc taken at |x| / sqrt2 so neither sign
// cancels.
template <class V>
TG_EVG_INLINE V gelu_erf(V x) {
  const V q = erfc_nonnegative(abs(x) * 0.7071067811865476f);
  const V half_x = 0.5f * x;
  // An explicit fma: a product with two uses would be contracted or not depending on how the
  // compiler lays out the select, which differs between lane counts.
  return select(x < 0.0f, half_x * q, simd::fma(-half_x, q, x));
}

}  // namespace tg::evg::math

TG_EVG_DIAGNOSTICS_POP
