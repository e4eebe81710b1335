#pragma once
// Lane-wise conversions between EVG element types with an explicit rounding mode, written once
// for W lanes with integer bit manipulation, so results are bit-exact and identical for every
// lane count and instruction set (no dependence on the FPU's rounding-mode register).
//
// Supported (From -> To): f32 -> f16, bf16, i8, i32 (any RoundMode); f16, bf16, i8 -> f32 (exact);
// i32 -> f32 (any RoundMode; exact below 2^24); T -> T (copy). Other pairs go through f32.
//
// Special values and saturation:
//   f32 -> f16: NaN stays NaN (quiet, sign and top payload bits kept); +-inf stay; a finite value
//     too large for f16 gives inf if the mode rounds its magnitude up there (rne, rna, ra; ru for
//     positives, rd for negatives) and the largest finite half (65504) otherwise, as IEEE 754
//     directed rounding does. Values below the smallest subnormal round to 0 or +-2^-24.
//   f32 -> bf16: the same rules (bf16 has f32's exponent range; NaN keeps its top bits, quiet).
//   f32 -> i8 / i32: round to an integer with the mode, then saturate to the type's range
//     ([-128, 127], [-2^31, 2^31 - 1]); +-inf saturate; NaN gives 0.
#include <cstdint>
#include <type_traits>

#include "tilegraph/evg/arch/simd.h"
#include "tilegraph/evg/numeric/element.h"
#include "tilegraph/evg/numeric/round_mode.h"

TG_EVG_DIAGNOSTICS_PUSH

namespace tg::evg::numeric {

using simd::bit_cast;
using simd::convert;
using simd::select;
using simd::splat;
using simd::Vec;

// 0/1 lanes from an all-ones/all-zeros comparison mask.
template <class U, class M>
TG_EVG_INLINE U ones_where(M mask) {
  return bit_cast<U>(mask) & 1u;
}

// 1 where a result truncated to `kept` must grow in magnitude by one unit in its last place,
// given its sign, the last kept bit, the first dropped bit (guard) and whether any later dropped
// bit is set (sticky). All arguments are 0/1 lanes.
template <RoundMode Mode, class U>
TG_EVG_INLINE U round_increment(U negative, U lsb, U guard, U sticky) {
  if constexpr (Mode == RoundMode::kNearestEven) return guard & (sticky | lsb);
  if constexpr (Mode == RoundMode::kNearestAway) return guard;
  if constexpr (Mode == RoundMode::kTowardZero) return U{};
  if constexpr (Mode == RoundMode::kTowardPosInf) return (guard | sticky) & (negative ^ 1u);
  if constexpr (Mode == RoundMode::kTowardNegInf) return (guard | sticky) & negative;
  if constexpr (Mode == RoundMode::kAwayFromZero) return guard | sticky;
  // To odd: an inexact result whose truncation is even moves to its odd neighbour.
  if constexpr (Mode == RoundMode::kToOdd) return (guard | sticky) & (lsb ^ 1u);
}

template <RoundMode Mode, int W>
TG_EVG_INLINE Vec<uint16_t, W> f32_to_f16(Vec<float, W> x) {
  using U = Vec<uint32_t, W>;
  using I = Vec<int32_t, W>;
  const U one = splat<W>(1u);
  const U bits = bit_cast<U>(x);
  const U negative = bits >> 31;
  const U a = bits & 0x7fffffffu;

  // |x| >= 2^-14, a normal half: rebias the exponent and drop 13 significand bits. A carry out
  // of the significand correctly bumps the exponent (up to inf).
  const U normal_kept = (a >> 13) - (112u << 10);
  const U normal_guard = (a >> 12) & 1u;
  const U normal_sticky = ones_where<U>((a & 0xfffu) != 0);

  // Below: a subnormal half m * 2^-24 with m = significand * 2^(exponent + 1), i.e. the 24-bit
  // significand shifted right by -exponent - 1 (14 at exponent -15). Shifts past 25 keep
  // nothing, so they are capped there; f32 subnormals have no implicit bit.
  const I exponent = bit_cast<I>(a >> 23) - 127;
  I shift_signed = -exponent - 1;
  shift_signed = select(shift_signed > 25, splat<W>(25), shift_signed);
  shift_signed = select(shift_signed < 14, splat<W>(14), shift_signed);
  const U shift = bit_cast<U>(shift_signed);
  const U significand = select(a >= 0x00800000u, (a & 0x7fffffu) | 0x800000u, a & 0x7fffffu);
  const U sub_kept = significand >> shift;
  const U sub_guard = (significand >> (shift - 1u)) & 1u;
  const U sub_sticky = ones_where<U>((significand & ((one << (shift - 1u)) - 1u)) != 0);

  const auto is_normal = a >= 0x38800000u;
  const U kept = select(is_normal, normal_kept, sub_kept);
  const U guard = select(is_normal, normal_guard, sub_guard);
  const U sticky = select(is_normal, normal_sticky, sub_sticky);
  U result = kept + round_increment<Mode>(negative, kept & 1u, guard, sticky);

  // |x| >= 2^16: beyond the largest half whatever the rounding; the mode picks inf or 65504.
  const U overflow = splat<W>(0x7bffu) + round_increment<Mode>(negative, one, one, one);
  result = select(a >= 0x47800000u, overflow, result);
  const U nan = 0x7e00u | ((a >> 13) & 0x3ffu);
  const U special = select(a > 0x7f800000u, nan, splat<W>(0x7c00u));
  result = select(a >= 0x7f800000u, special, result);
  return convert<Vec<uint16_t, W>>(result | (negative << 15));
}

template <RoundMode Mode, int W>
TG_EVG_INLINE Vec<uint16_t, W> f32_to_bf16(Vec<float, W> x) {
  using U = Vec<uint32_t, W>;
  const U bits = bit_cast<U>(x);
  const U negative = bits >> 31;
  const U a = bits & 0x7fffffffu;
  const U kept = a >> 16;
  const U guard = (a >> 15) & 1u;
  const U sticky = ones_where<U>((a & 0x7fffu) != 0);
  // bf16 shares f32's exponent range: only rounding up the largest finite values overflows,
  // and the carry produces inf exactly when the mode says so.
  U result = kept + round_increment<Mode>(negative, kept & 1u, guard, sticky);
  result = select(a > 0x7f800000u, kept | 0x40u, result);
  return convert<Vec<uint16_t, W>>(result | (negative << 15));
}

template <int W>
TG_EVG_INLINE Vec<float, W> f16_to_f32(Vec<uint16_t, W> h) {
  using U = Vec<uint32_t, W>;
  using F = Vec<float, W>;
  const U wide = convert<U>(h);
  const U sign = (wide & 0x8000u) << 16;
  const U exponent = (wide >> 10) & 0x1fu;
  const U mantissa = wide & 0x3ffu;
  const U normal = ((exponent + 112u) << 23) | (mantissa << 13);
  const U special = 0x7f800000u | (mantissa << 13);
  // A subnormal half is mantissa * 2^-24, exact in f32 arithmetic.
  const U subnormal = bit_cast<U>(convert<F>(bit_cast<Vec<int32_t, W>>(mantissa)) * 0x1p-24f);
  U result = select(exponent == 0x1fu, special, normal);
  result = select(exponent == 0u, subnormal, result);
  return bit_cast<F>(result | sign);
}

template <int W>
TG_EVG_INLINE Vec<float, W> bf16_to_f32(Vec<uint16_t, W> h) {
  return bit_cast<Vec<float, W>>(convert<Vec<uint32_t, W>>(h) << 16);
}

// Rounds to an integer with the mode, saturates to [Int's min, Int's max], NaN -> 0.
template <RoundMode Mode, class Int, int W>
TG_EVG_INLINE Vec<Int, W> f32_to_int(Vec<float, W> x) {
  static_assert(std::is_same_v<Int, int8_t> || std::is_same_v<Int, int32_t>);
  using F = Vec<float, W>;
  using I = Vec<int32_t, W>;
  using U = Vec<uint32_t, W>;
  const U bits = bit_cast<U>(x);
  const U negative = bits >> 31;
  const F magnitude = bit_cast<F>(bits & 0x7fffffffu);
  // From 2^23 up every float is an integer; below, the truncating conversion is exact and safe.
  const auto small = magnitude < 8388608.0f;
  const I truncated_small = convert<I>(select(small, x, F{}));
  const F truncated = select(small, convert<F>(truncated_small), x);
  const F fraction = bit_cast<F>(bit_cast<U>(x - truncated) & 0x7fffffffu);
  const auto at_least_half = fraction >= 0.5f;
  const U guard = ones_where<U>(at_least_half);
  const U sticky = ones_where<U>(select(at_least_half, fraction > 0.5f, fraction > 0.0f));
  const U lsb = bit_cast<U>(truncated_small) & 1u;
  const U increment = round_increment<Mode>(negative, lsb, guard, sticky);
  const F step = select(negative != 0, splat<W>(-1.0f), splat<W>(1.0f));
  const F rounded = truncated + convert<F>(bit_cast<I>(increment)) * step;

  constexpr float kLow = std::is_same_v<Int, int8_t> ? -128.0f : -2147483648.0f;
  constexpr int32_t kLowInt = std::is_same_v<Int, int8_t> ? -128 : INT32_MIN;
  constexpr float kHighExclusive = std::is_same_v<Int, int8_t> ? 128.0f : 2147483648.0f;
  constexpr int32_t kHighInt = std::is_same_v<Int, int8_t> ? 127 : INT32_MAX;
  const auto in_range = (rounded >= kLow) & (rounded < kHighExclusive);  // false for NaN
  I result = convert<I>(select(in_range, rounded, F{}));
  result = select(rounded >= kHighExclusive, splat<W>(kHighInt), result);
  result = select(rounded < kLow, splat<W>(kLowInt), result);
  if constexpr (std::is_same_v<Int, int32_t>) {
    return result;
  } else {
    return convert<Vec<Int, W>>(result);
  }
}

// Through f64, which holds every int32 exactly: drop 29 of its 53 significand bits.
template <RoundMode Mode, int W>
TG_EVG_INLINE Vec<float, W> i32_to_f32(Vec<int32_t, W> x) {
  using U = Vec<uint64_t, W>;
  const U one = splat<W>(uint64_t{1});
  const U bits = bit_cast<U>(convert<Vec<double, W>>(x));
  const U negative = bits >> 63;
  const U a = bits & 0x7fffffffffffffffull;
  const U kept = (a >> 29) - (uint64_t{1023 - 127} << 23);
  const U guard = (a >> 28) & 1u;
  const U sticky = ones_where<U>((a & ((one << 28) - 1u)) != 0);
  U result = kept + round_increment<Mode>(negative, kept & 1u, guard, sticky);
  result = select(a == 0, U{}, result);
  return bit_cast<Vec<float, W>>(convert<Vec<uint32_t, W>>(result | (negative << 31)));
}

// Element-type conversion of W lanes: Vec<LaneOf<From>> -> Vec<LaneOf<To>>.
template <EvgElement To, EvgElement From, RoundMode Mode, int W>
TG_EVG_INLINE Vec<LaneOf<To>, W> convert_lanes(Vec<LaneOf<From>, W> x) {
  if constexpr (std::is_same_v<To, From>) {
    return x;
  } else if constexpr (std::is_same_v<From, float> && std::is_same_v<To, tg::f16>) {
    return f32_to_f16<Mode, W>(x);
  } else if constexpr (std::is_same_v<From, float> && std::is_same_v<To, tg::bf16>) {
    return f32_to_bf16<Mode, W>(x);
  } else if constexpr (std::is_same_v<From, float> && (std::is_same_v<To, int8_t> || std::is_same_v<To, int32_t>)) {
    return f32_to_int<Mode, To, W>(x);
  } else if constexpr (std::is_same_v<From, tg::f16> && std::is_same_v<To, float>) {
    return f16_to_f32<W>(x);
  } else if constexpr (std::is_same_v<From, tg::bf16> && std::is_same_v<To, float>) {
    return bf16_to_f32<W>(x);
  } else if constexpr (std::is_same_v<From, int8_t> && std::is_same_v<To, float>) {
    return convert<Vec<float, W>>(x);
  } else if constexpr (std::is_same_v<From, int32_t> && std::is_same_v<To, float>) {
    return i32_to_f32<Mode, W>(x);
  } else {
    static_assert(std::is_same_v<To, From>, "VisitorCast converts f32 <-> f16/bf16/i8/i32 only: cast through f32");
  }
}

// Whether convert_lanes<To, From> exists (for checks that want a clear message early).
template <class To, class From>
inline constexpr bool kConvertible =
    std::is_same_v<To, From> || std::is_same_v<From, float> || std::is_same_v<To, float>;

}  // namespace tg::evg::numeric

TG_EVG_DIAGNOSTICS_POP
