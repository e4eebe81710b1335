#pragma once
// Branch-free f32 math on W-lane vectors (simd::Vec<float, W>), for the activation functors.
// Every lane runs the same instruction sequence, so a value's result does not depend on where
// it sits in a tile or on the lane count. Accuracy: exp ~1 ulp (Cephes), tanh a few ulp, erfc
// relative error ~1.2e-7 (Numerical Recipes' Chebyshev fit) before f32 rounding.
#include <cstdint>

#include "tilegraph/evg/arch/simd.h"

TG_EVG_DIAGNOSTICS_PUSH

namespace tg::evg::math {

using simd::bit_cast;
using simd::convert;
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

// 2^n for integer lanes n in [-126, 127].
template <class V>
TG_EVG_INLINE V pow2(IntLanes<V> n) {
  return bit_cast<V>((n + 127) << 23);
}

// Cephes' expf: exp(x) = 2^n exp(r) with |r| <= ln2/2 and a degree-6 polynomial for exp(r).
template <class V>
TG_EVG_INLINE V exp(V x) {
  using I = IntLanes<V>;
  // Beyond these bounds the result is 0 or inf anyway; within, n stays in [-150, 129].
  x = select(x < -104.0f, V{} - 104.0f, x);
  x = select(x > 89.0f, V{} + 89.0f, x);
  // Round to nearest by adding and removing 1.5 * 2^23 (|x log2 e| < 2^22 here).
  V n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  n = select(n == n, n, V{});  // NaN: any n will do, and the conversion must stay defined
  V r = x - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  V p = V{} + 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * (r * r) + (r + 1.0f);
  // 2^n as two normal factors, so results that are subnormal or overflow still come out right.
  const I ni = convert<I>(n);
  const I half = ni >> 1;
  return p * pow2<V>(half) * pow2<V>(ni - half);
}

// Cephes' tanhf: an odd polynomial below 0.625, 1 - 2 / (exp(2|x|) + 1) above.
template <class V>
TG_EVG_INLINE V tanh(V x) {
  const V ax = abs(x);
  const V z = x * x;
  V p = V{} - 5.70498872745e-3f;
  p = p * z + 2.06390887954e-2f;
  p = p * z - 5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z - 3.33332819422e-1f;
  const V small = p * z * x + x;
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
  const V t = 1.0f / (1.0f + 0.5f * z);
  V p = V{} + 0.17087277f;
  p = p * t - 0.82215223f;
  p = p * t + 1.48851587f;
  p = p * t - 1.13520398f;
  p = p * t + 0.27886807f;
  p = p * t - 0.18628806f;
  p = p * t + 0.09678418f;
  p = p * t + 0.37409196f;
  p = p * t + 1.00002368f;
  p = p * t - 1.26551223f;
  return t * exp(p - z * z);
}

// gelu, tanh form: 0.5 x (1 + tanh(u)) == x / (1 + exp(-2u)), which does not cancel for x < 0.
template <class V>
TG_EVG_INLINE V gelu_tanh(V x) {
  const V u = 0.7978845608028654f * (x + 0.044715f * x * x * x);
  return x / (1.0f + exp(-(u + u)));
}

// gelu, erf form: 0.5 x erfc(-x / sqrt2), with erfc taken at |x| / sqrt2 so neither sign
// cancels.
template <class V>
TG_EVG_INLINE V gelu_erf(V x) {
  const V q = erfc_nonnegative(abs(x) * 0.7071067811865476f);
  const V half_x = 0.5f * x;
  return select(x < 0.0f, half_x * q, x - half_x * q);
}

}  // namespace tg::evg::math

TG_EVG_DIAGNOSTICS_POP
