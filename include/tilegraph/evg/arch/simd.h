#pragma once
// Portable SIMD for the EVG templates: GCC/Clang vector extensions, so every loop is written once
// for W lanes and the compiler emits SSE, AVX2 or AVX-512 code for whatever target the including
// file is compiled for (a JIT kernel under `#pragma GCC target`, a *_avx512.cpp file, or the
// baseline). W = 1 gives plain scalar code with the same arithmetic per lane, which is what makes
// results independent of the lane count.
//
// Vectors wider than the compile target are legal but slow, and passing them between functions
// changes the ABI: everything here is always_inline and -Wpsabi is silenced for that reason.
#include <cstddef>
#include <cstdint>
#include <type_traits>

#if defined(__x86_64__) || defined(__i386__)
// GCC 12's AVX-512 intrinsics initialise their "undefined" operands from themselves, which
// -W(maybe-)uninitialized reports once they are inlined (GCC bug 105593).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#endif

// The vector ISA the including code is compiled for. A JIT kernel compiled under `#pragma GCC
// target(...)` names it with TG_EVG_JIT_TARGET_AVX512 / _AVX2 (kernel/target.h): GCC's C++ front
// end does not define __AVX512F__ and the like for a target pragma.
#if defined(TG_EVG_JIT_TARGET_AVX512) || defined(__AVX512F__)
#define TG_EVG_SIMD_AVX512 1
#endif
#if defined(TG_EVG_SIMD_AVX512) || defined(TG_EVG_JIT_TARGET_AVX2) || defined(__AVX2__)
#define TG_EVG_SIMD_AVX2 1
#endif

// Spelled as in host/vector.h, which fused GEMM kernels include too.
#define TG_EVG_INLINE __attribute__((always_inline)) inline

#define TG_EVG_DIAGNOSTICS_PUSH _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wpsabi\"")
#define TG_EVG_DIAGNOSTICS_POP _Pragma("GCC diagnostic pop")

TG_EVG_DIAGNOSTICS_PUSH

namespace tg::evg::simd {

template <class T, int W>
struct VecOf {
  static_assert(W >= 1 && (W & (W - 1)) == 0, "lane counts are powers of two");
  typedef T type __attribute__((vector_size(sizeof(T) * W)));
};
// W lanes of T.
template <class T, int W>
using Vec = typename VecOf<T, W>::type;

// The signed integer type comparisons of T lanes produce.
template <size_t Bytes>
struct MaskLaneOf;
template <>
struct MaskLaneOf<1> {
  using type = int8_t;
};
template <>
struct MaskLaneOf<2> {
  using type = int16_t;
};
template <>
struct MaskLaneOf<4> {
  using type = int32_t;
};
template <>
struct MaskLaneOf<8> {
  using type = int64_t;
};
template <class T, int W>
using Mask = Vec<typename MaskLaneOf<sizeof(T)>::type, W>;

// Unaligned loads and stores (scratch is aligned, user memory need not be).
template <int W, class T>
TG_EVG_INLINE Vec<T, W> load(const T* p) {
  Vec<T, W> v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}
template <int W, class T>
TG_EVG_INLINE void store(T* p, Vec<T, W> v) {
  __builtin_memcpy(p, &v, sizeof v);
}
// The first n (< W) lanes from p, the others zero.
template <int W, class T>
TG_EVG_INLINE Vec<T, W> load_partial(const T* p, int n) {
  Vec<T, W> v{};
  __builtin_memcpy(&v, p, size_t(n) * sizeof(T));
  return v;
}
// The first n (< W) lanes only.
template <int W, class T>
TG_EVG_INLINE void store_partial(T* p, Vec<T, W> v, int n) {
  __builtin_memcpy(p, &v, size_t(n) * sizeof(T));
}

// x in every lane. x - 0 rather than 0 + x: the sum turns a -0 into +0, the difference is x for
// every x (and costs nothing: the compiler drops the subtraction).
template <int W, class T>
TG_EVG_INLINE Vec<T, W> splat(T x) {
  return x - Vec<T, W>{};
}

// Reinterprets the bits (same total size).
template <class To, class From>
TG_EVG_INLINE To bit_cast(From from) {
  static_assert(sizeof(To) == sizeof(From));
  return __builtin_bit_cast(To, from);
}

// Converts lane by lane, as a C cast of each lane would (values must be in range).
template <class To, class From>
TG_EVG_INLINE To convert(From from) {
  return __builtin_convertvector(from, To);
}

// x as a V: a V as it is, a scalar in every lane (as splat: -0 stays -0).
template <class V, class T>
TG_EVG_INLINE V broadcast(T x) {
  if constexpr (std::is_same_v<T, V>) {
    return x;
  } else {
    return x - V{};
  }
}

// a * b + c with a single rounding, lane by lane, so the result does not depend on the lane
// count or the ISA. b and c may be scalars. Full-width f32 vectors use the vfmadd intrinsic:
// GCC's SLP vectoriser usually turns the lane loop into one instruction, but not in every
// context (inlined into one caller's loop it emitted 16 scalar FMAs and a gelu ran 6x slower).
// Other widths keep the loop; without FMA each lane calls libm's fmaf (exact but slow).
template <class V, class B, class C>
TG_EVG_INLINE V fma(V a, B b, C c) {
  const V vb = broadcast<V>(b), vc = broadcast<V>(c);
  if constexpr (std::is_same_v<std::remove_cv_t<std::remove_reference_t<decltype(a[0])>>, float>) {
#if defined(TG_EVG_SIMD_AVX512)
    if constexpr (sizeof(V) == 64) return (V)_mm512_fmadd_ps((__m512)a, (__m512)vb, (__m512)vc);
#endif
#if defined(TG_EVG_SIMD_AVX2)
    if constexpr (sizeof(V) == 32) return (V)_mm256_fmadd_ps((__m256)a, (__m256)vb, (__m256)vc);
#endif
  }
  V r;
  for (size_t i = 0; i < sizeof(V) / sizeof(a[0]); ++i) r[i] = __builtin_fmaf(a[i], vb[i], vc[i]);
  return r;
}

// Lane-wise `mask ? a : b`; `mask` lanes are all ones or all zeros.
template <class V, class M>
TG_EVG_INLINE V select(M mask, V a, V b) {
  return mask ? a : b;
}

// Lane-wise `a > b ? a : b` and `a < b ? a : b`: b when either is NaN, as x86's max/min
// instructions, which the conditional alone does not compile to. Clamp with the bound first,
// max(lo, x), to keep a NaN x.
template <class V>
TG_EVG_INLINE V max(V a, V b) {
#if defined(TG_EVG_SIMD_AVX512)
  if constexpr (sizeof(V) == 64) return (V)_mm512_max_ps((__m512)a, (__m512)b);
#endif
#if defined(TG_EVG_SIMD_AVX2)
  if constexpr (sizeof(V) == 32) return (V)_mm256_max_ps((__m256)a, (__m256)b);
#endif
#if defined(__SSE__)
  if constexpr (sizeof(V) == 16) return (V)_mm_max_ps((__m128)a, (__m128)b);
#endif
  return select(a > b, a, b);
}
template <class V>
TG_EVG_INLINE V min(V a, V b) {
#if defined(TG_EVG_SIMD_AVX512)
  if constexpr (sizeof(V) == 64) return (V)_mm512_min_ps((__m512)a, (__m512)b);
#endif
#if defined(TG_EVG_SIMD_AVX2)
  if constexpr (sizeof(V) == 32) return (V)_mm256_min_ps((__m256)a, (__m256)b);
#endif
#if defined(__SSE__)
  if constexpr (sizeof(V) == 16) return (V)_mm_min_ps((__m128)a, (__m128)b);
#endif
  return select(a < b, a, b);
}

// Lane i is table[index[i] mod N], for f32 lanes and an N = 16 or 32 entry table. A lookup is
// exact, so piecewise coefficients fetched this way give the same bits at every lane count:
// AVX-512 permutes (one for 16 entries, a two-source one for 32), AVX2 8-entry permutes and
// blends, element reads elsewhere.
template <int N, class I>
TG_EVG_INLINE Vec<float, int(sizeof(I) / sizeof(int32_t))> lookup(const float (&table)[N], I index) {
  static_assert(N == 16 || N == 32, "16 or 32 entries");
  constexpr int W = sizeof(I) / sizeof(int32_t);
  using V = Vec<float, W>;
#if defined(TG_EVG_SIMD_AVX512)
  if constexpr (W == 16) {
    const __m512i i = (__m512i)index;
    if constexpr (N == 16)
      return (V)_mm512_permutexvar_ps(i, _mm512_loadu_ps(table));
    else
      return (V)_mm512_permutex2var_ps(_mm512_loadu_ps(table), i, _mm512_loadu_ps(table + 16));
  }
#endif
#if defined(TG_EVG_SIMD_AVX2)
  if constexpr (W == 8) {
    const __m256i i = (__m256i)index;
    // Index bit 3 (then bit 4) moved to the sign bit picks between 8-entry quarters.
    const __m256 bit3 = _mm256_castsi256_ps(_mm256_slli_epi32(i, 28));
    const __m256 low = _mm256_blendv_ps(_mm256_permutevar8x32_ps(_mm256_loadu_ps(table), i),
                                        _mm256_permutevar8x32_ps(_mm256_loadu_ps(table + 8), i), bit3);
    if constexpr (N == 16) {
      return (V)low;
    } else {
      const __m256 high = _mm256_blendv_ps(_mm256_permutevar8x32_ps(_mm256_loadu_ps(table + 16), i),
                                           _mm256_permutevar8x32_ps(_mm256_loadu_ps(table + 24), i), bit3);
      return (V)_mm256_blendv_ps(low, high, _mm256_castsi256_ps(_mm256_slli_epi32(i, 27)));
    }
  }
#endif
  V r;
  for (int l = 0; l < W; ++l) r[l] = table[index[l] & (N - 1)];
  return r;
}

}  // namespace tg::evg::simd

TG_EVG_DIAGNOSTICS_POP
