#pragma once
// f32 math on W-lane vectors (simd::Vec<float, W>), for the activation functors. A lane's result
// depends on its own input only (every lane runs the same operations; exp's one vector-wide
// branch picks between two scalings that round identically), so it does not depend on where the
// value sits in a tile or on the lane count. Multiply-adds are explicit simd::fma: GCC's C++ default
// contracts `a * b + c` under FMA targets, and for a product with two uses it did so at some lane
// counts and not others. Per-lane table lookups (simd::lookup) are exact, so piecewise
// coefficients keep that property. Accuracy: exp 1.0 ulp, tanh ~1.4 ulp, erfc relative error ~1.2e-7
// (Numerical Recipes' Chebyshev fit) before f32 rounding.
#include <cstdint>

#include "tilegraph/evg/arch/simd.h"
#include "tilegraph/evg/fusion/exp_table.h"

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
  return bit_cast<V>((bit_cast<I>(magnitude) & 0x7fffffff) | (bit_cast<I>(sign) & int32_t(0x80000000u)));
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

// exp(x) = 2^(k/16) exp(r) with k = round(16 x / ln2) and |r| <= ln2/32: the cubic for exp(r)
// (relative error 2.4e-9) has its coefficients pre-multiplied by 2^(j/16), j = k mod 16, and
// looked up per lane (exp_table.h, made by scripts/gen_exp_table.py), so lookups, three FMAs
// and a scaling by 2^floor(k/16) follow the reduction. x must be in [-104, 89] (beyond, the
// result is 0 or inf anyway; within, floor(k/16) is in [-151, 128]); kNormalResults: the caller
// promises x in [-87, 88]. With kTwoPartLn2 = false, r = x - k (ln2/16) takes ln2/16 rounded to
// f32, which adds a relative error of 2.7e-9 |x|: callers whose argument already carries more
// (gelu's) save an FMA.
template <bool kTwoPartLn2, bool kNormalResults, class V>
TG_EVG_INLINE V exp_in_range(V x) {
  using simd::fma;
  using simd::lookup;
  constexpr auto& c = tables::kExpCoefficients;
  // Adding 1.5 * 2^23 rounds 16 x / ln2 to an integer k and leaves it in t's low mantissa bits.
  constexpr float kRound = 12582912.0f;
  const V t = fma(x, 23.0831206542234f, kRound);
  const V k = t - kRound;
  V r;
  if constexpr (kTwoPartLn2) {
    r = fma(k, 1.326215250e-5f, fma(k, -0.0433349609375f, x));
  } else {
    r = fma(k, -0.0433216989f, x);
  }
  const IntLanes<V> j = bit_cast<IntLanes<V>>(t);  // k mod 16 in the low bits (a NaN's is arbitrary)
  V p = fma(lookup(c[3], j), r, lookup(c[2], j));
  p = fma(p, r, lookup(c[1], j));
  p = fma(p, r, lookup(c[0], j));  // 2^(j/16) exp(r), in [0.97, 1.96]
  // 2^m, m = floor(k/16), as 2^(m - b) 2^b with b = +-32, both normal, so subnormal and
  // overflowing results round once. m comes from t's bits (k wraps in unsigned lanes; an
  // arithmetic shift floors).
  using U = simd::Vec<uint32_t, sizeof(V) / sizeof(float)>;
#if defined(TG_EVG_SIMD_AVX512)
  // vscalefps rounds the same way in one instruction, but takes a microcode assist (~8x slower)
  // on a vector with any subnormal, underflowing or overflowing result: those vectors (some
  // m outside [-125, 127]) take the multiplies. Either way a lane's bits depend on its x only.
  // A caller that keeps x in [-87, 88] (kNormalResults) needs no test.
  if constexpr (sizeof(V) == 64) {
    if (kNormalResults || (_mm512_cmp_ps_mask((__m512)k, _mm512_set1_ps(-2000.0f), _CMP_LT_OQ) |
                           _mm512_cmp_ps_mask((__m512)k, _mm512_set1_ps(2047.0f), _CMP_GT_OQ)) == 0) {
      return (V)_mm512_scalef_ps((__m512)p, (__m512)(k * 0.0625f));
    }
  }
#endif
  const IntLanes<V> m = bit_cast<IntLanes<V>>(bit_cast<U>(t) - bit_cast<U>(V{} + kRound)) >> 4;
  const U biased_m = (bit_cast<U>(m) + 127u) << 23;
  const U b = select(k < 0.0f, U{} - (32u << 23), U{} + (32u << 23));
  return p * bit_cast<V>(biased_m - b) * bit_cast<V>(b + (127u << 23));
}

// Max error 1.0 ulp over 2M random inputs (test_math_fma.cpp).
template <class V>
TG_EVG_INLINE V exp(V x) {
  // max/min keep a NaN x (and then every step).
  return exp_in_range<true, false>(simd::min(V{} + 89.0f, simd::max(V{} - 104.0f, x)));
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

// x sigmoid(x), as one division.
template <class V>
TG_EVG_INLINE V silu(V x) {
  return x / (1.0f + exp(-x));
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
// Relative error <= 3e-7 + 2e-7 |2u| (the second term: the f32 rounding of exp's argument, which
// only the tiny results of the negative tail feel; 2.5e-7 measured for x >= -1); -0 below
// x = -10.03.
template <class V>
TG_EVG_INLINE V gelu_tanh(V x) {
  // -2u = x (c1 + c2 x^2) with c1 = -2 sqrt(2 / pi), c2 = 0.044715 c1.
  const V minus_2u = x * simd::fma(x * x, -0.0713548162726f, -1.5957691216057308f);
  // Below -87, 1 + exp(-2u) is 1 all the same; above 88 (x < -10.03, |gelu| < 6.1e-38) the
  // result is -0 (-inf included). exp's argument stays where its results are normal.
  const V e = exp_in_range<false, true>(simd::min(V{} + 88.0f, simd::max(V{} - 87.0f, minus_2u)));
  return select(minus_2u > 88.0f, -V{}, x / (1.0f + e));
}

// gelu, erf form: 0.5 x erfc(-x / sqrt2), with erfc taken at |x| / sqrt2 so neither sign
// cancels.
template <class V>
TG_EVG_INLINE V gelu_erf(V x) {
  const V q = erfc_nonnegative(abs(x) * 0.7071067811865476f);
  const V half_x = 0.5f * x;
  // An explicit fma: a product with two uses would be contracted or not depending on how the
  // compiler lays out the select, which differs between lane counts.
  const V r = select(x < 0.0f, half_x * q, simd::fma(-half_x, q, x));
  // Past |x| ~ 13 erfc is 0 and the result x or -0, which r already is for finite x; written
  // out so that x = +-inf gives +inf and -0 instead of inf * 0.
  return select(q == 0.0f, select(x < 0.0f, -V{}, x), r);
}

}  // namespace tg::evg::math

TG_EVG_DIAGNOSTICS_POP
