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

// Spelled as in cpu/vector.h, which fused GEMM kernels include too.
#define TG_EVG_INLINE __attribute__((always_inline)) inline

#define TG_EVG_DIAGNOSTICS_PUSH \
  _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wpsabi\"")
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
// The first n (< W) lanes only.
template <int W, class T>
TG_EVG_INLINE void store_partial(T* p, Vec<T, W> v, int n) {
  __builtin_memcpy(p, &v, size_t(n) * sizeof(T));
}

template <int W, class T>
TG_EVG_INLINE Vec<T, W> splat(T x) {
  return Vec<T, W>{} + x;
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

// x as a V: a V as it is (adding it to V{} would cost an add, as x + 0 is not x for x = -0), a
// scalar in every lane.
template <class V, class T>
TG_EVG_INLINE V broadcast(T x) {
  if constexpr (std::is_same_v<T, V>) {
    return x;
  } else {
    return V{} + x;
  }
}

// a * b + c with a single rounding, lane by lane, so the result does not depend on the lane
// count or the ISA. GCC turns the lane loop into one vfmadd on targets with FMA; without FMA each
// lane calls libm's fmaf (exact but slow). b and c may be scalars.
template <class V, class B, class C>
TG_EVG_INLINE V fma(V a, B b, C c) {
  const V vb = broadcast<V>(b), vc = broadcast<V>(c);
  V r;
  for (size_t i = 0; i < sizeof(V) / sizeof(a[0]); ++i) r[i] = __builtin_fmaf(a[i], vb[i], vc[i]);
  return r;
}

// Lane-wise `mask ? a : b`; `mask` lanes are all ones or all zeros.
template <class V, class M>
TG_EVG_INLINE V select(M mask, V a, V b) {
  return mask ? a : b;
}

}  // namespace tg::evg::simd

TG_EVG_DIAGNOSTICS_POP
