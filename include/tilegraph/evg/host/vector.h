#pragma once
// The vector type the CPU GEMM is written in, chosen by the instruction set this translation unit
// is compiled for (target.h): 16 lanes of AVX-512, 8 of AVX2, or one plain float. Packing, the
// micro-kernels and the GEMV are written once against this interface.
#include <cstdint>
#include <cstring>

#include "tilegraph/evg/kernel/operand.h"
#include "tilegraph/evg/kernel/target.h"

#if !defined(TG_EVG_TARGET_PORTABLE)
// GCC 12's AVX-512 intrinsics initialise their "undefined" operands from themselves, which
// -W(maybe-)uninitialized reports once inlined (GCC bug 105593).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#endif

#define TG_EVG_INLINE __attribute__((always_inline)) inline

namespace tg::evg::host {
inline namespace TG_EVG_TARGET_NAMESPACE {

// Whether Vec has dot_bf16_pairs (AVX512_BF16's vdpbf16ps).
#if defined(TG_EVG_TARGET_BF16_DOT)
inline constexpr bool kHasBf16Dot = true;
#else
inline constexpr bool kHasBf16Dot = false;
#endif

// IEEE binary16 to binary32, exact for every input (subnormals, infinities, NaN payloads).
TG_EVG_INLINE float half_to_float(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu;
  uint32_t bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13);
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else {
    const float magnitude = float(mantissa) * 0x1p-24f;  // subnormal (or zero): exact in f32
    std::memcpy(&bits, &magnitude, sizeof bits);
    bits |= sign;
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

TG_EVG_INLINE float bfloat_to_float(uint16_t h) {
  const uint32_t bits = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// Element i of a row of `type` starting at `p`, as f32.
TG_EVG_INLINE float load_element(const void* p, ElementType type, int64_t i) {
  switch (type) {
    case ElementType::F32: return static_cast<const float*>(p)[i];
    case ElementType::F16: return half_to_float(static_cast<const uint16_t*>(p)[i]);
    case ElementType::BF16: return bfloat_to_float(static_cast<const uint16_t*>(p)[i]);
  }
  return 0.0f;
}

TG_EVG_INLINE const void* element_address(const void* base, ElementType type, int64_t index) {
  return static_cast<const char*>(base) + index * element_bytes(type);
}

#if defined(TG_EVG_TARGET_AVX512)

struct Vec {
  using F = __m512;
  static constexpr int kLanes = 16;

  static TG_EVG_INLINE F zero() { return _mm512_setzero_ps(); }
  static TG_EVG_INLINE F set1(float x) { return _mm512_set1_ps(x); }
  static TG_EVG_INLINE F load(const float* p) { return _mm512_loadu_ps(p); }
  static TG_EVG_INLINE void store(float* p, F x) { _mm512_storeu_ps(p, x); }
  static TG_EVG_INLINE F add(F a, F b) { return _mm512_add_ps(a, b); }
  static TG_EVG_INLINE F fmadd(F a, F b, F c) { return _mm512_fmadd_ps(a, b, c); }
  static TG_EVG_INLINE float reduce(F x) { return _mm512_reduce_add_ps(x); }
  // out[0..3] = the lane sums of a, b, c and d: the four reductions share their shuffles (half
  // the instructions of four reduce() calls; the sums are formed in another order).
  static TG_EVG_INLINE void reduce4(F a, F b, F c, F d, float* out) {
    const F ab = _mm512_add_ps(_mm512_shuffle_f32x4(a, b, 0x44), _mm512_shuffle_f32x4(a, b, 0xee));
    const F cd = _mm512_add_ps(_mm512_shuffle_f32x4(c, d, 0x44), _mm512_shuffle_f32x4(c, d, 0xee));
    // 128-bit chunk i now holds four partial sums of a, b, c, d in turn.
    F abcd = _mm512_add_ps(_mm512_shuffle_f32x4(ab, cd, 0x88), _mm512_shuffle_f32x4(ab, cd, 0xdd));
    abcd = _mm512_add_ps(abcd, _mm512_permute_ps(abcd, 0x4e));
    abcd = _mm512_add_ps(abcd, _mm512_permute_ps(abcd, 0xb1));
    _mm_storeu_ps(out, _mm512_castps512_ps128(_mm512_maskz_compress_ps(0x1111, abcd)));
  }
  static TG_EVG_INLINE void store_n(float* p, F x, int n) { _mm512_mask_storeu_ps(p, __mmask16((1u << n) - 1), x); }

#if defined(TG_EVG_TARGET_BF16_DOT)
  // acc + a.lo * b.lo + a.hi * b.hi in each lane, where a lane of a and of b holds two bf16 (the
  // low half first in memory). Products are exact; the instruction treats subnormal inputs and
  // results as zero.
  static TG_EVG_INLINE F dot_bf16_pairs(F a, F b, F acc) { return _mm512_dpbf16_ps(acc, (__m512bh)a, (__m512bh)b); }
  // 2 * kLanes bf16 at p as they are (pairs for dot_bf16_pairs); the first n only, the rest 0.
  static TG_EVG_INLINE F load_bf16(const uint16_t* p) { return _mm512_castsi512_ps(_mm512_loadu_si512(p)); }
  static TG_EVG_INLINE F load_bf16_n(const uint16_t* p, int n) {
    return _mm512_castsi512_ps(_mm512_maskz_loadu_epi16(__mmask32(n >= 32 ? ~0u : (1u << n) - 1), p));
  }
#endif

  // The first n (0 < n <= kLanes) elements of `type` at p as f32, the other lanes 0.
  static TG_EVG_INLINE F load_n(const void* p, ElementType type, int n) {
    const __mmask16 mask = __mmask16((1u << n) - 1);
    switch (type) {
      case ElementType::F32: return _mm512_maskz_loadu_ps(mask, p);
      case ElementType::F16: return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(mask, p));
      case ElementType::BF16:
        return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(mask, p)), 16));
    }
    return zero();
  }
  static TG_EVG_INLINE F load(const void* p, ElementType type) {
    switch (type) {
      case ElementType::F32: return _mm512_loadu_ps(p);
      case ElementType::F16: return _mm512_cvtph_ps(_mm256_loadu_si256(static_cast<const __m256i*>(p)));
      case ElementType::BF16:
        return _mm512_castsi512_ps(
            _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256(static_cast<const __m256i*>(p))), 16));
    }
    return zero();
  }

  // In-place 16 x 16 transpose: r[i] lane j becomes r[j] lane i.
  static TG_EVG_INLINE void transpose(F r[kLanes]) {
    F t[16];
#pragma GCC unroll 16
    for (int i = 0; i < 8; ++i) {
      t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
      t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    // Each 128-bit lane l of r[4i + j] now holds column 4l + j of rows 4i .. 4i+3.
#pragma GCC unroll 16
    for (int i = 0; i < 4; ++i) {
      const __m512d a = _mm512_castps_pd(t[4 * i]), b = _mm512_castps_pd(t[4 * i + 2]);
      const __m512d c = _mm512_castps_pd(t[4 * i + 1]), d = _mm512_castps_pd(t[4 * i + 3]);
      r[4 * i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, b));
      r[4 * i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, b));
      r[4 * i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(c, d));
      r[4 * i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(c, d));
    }
    // A 4 x 4 transpose of 128-bit lanes for each j.
#pragma GCC unroll 16
    for (int j = 0; j < 4; ++j) {
      const F u0 = _mm512_shuffle_f32x4(r[j], r[4 + j], 0x88);
      const F u1 = _mm512_shuffle_f32x4(r[j], r[4 + j], 0xdd);
      const F u2 = _mm512_shuffle_f32x4(r[8 + j], r[12 + j], 0x88);
      const F u3 = _mm512_shuffle_f32x4(r[8 + j], r[12 + j], 0xdd);
      t[j] = _mm512_shuffle_f32x4(u0, u2, 0x88);
      t[4 + j] = _mm512_shuffle_f32x4(u1, u3, 0x88);
      t[8 + j] = _mm512_shuffle_f32x4(u0, u2, 0xdd);
      t[12 + j] = _mm512_shuffle_f32x4(u1, u3, 0xdd);
    }
#pragma GCC unroll 16
    for (int i = 0; i < 16; ++i) r[i] = t[i];
  }
};

#elif defined(TG_EVG_TARGET_AVX2)

struct Vec {
  using F = __m256;
  static constexpr int kLanes = 8;

  static TG_EVG_INLINE F zero() { return _mm256_setzero_ps(); }
  static TG_EVG_INLINE F set1(float x) { return _mm256_set1_ps(x); }
  static TG_EVG_INLINE F load(const float* p) { return _mm256_loadu_ps(p); }
  static TG_EVG_INLINE void store(float* p, F x) { _mm256_storeu_ps(p, x); }
  static TG_EVG_INLINE F add(F a, F b) { return _mm256_add_ps(a, b); }
  static TG_EVG_INLINE F fmadd(F a, F b, F c) { return _mm256_fmadd_ps(a, b, c); }
  static TG_EVG_INLINE float reduce(F x) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(x), _mm256_extractf128_ps(x, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }
  // out[0..3] = the lane sums of a, b, c and d, sharing the horizontal adds.
  static TG_EVG_INLINE void reduce4(F a, F b, F c, F d, float* out) {
    const __m256 abcd = _mm256_hadd_ps(_mm256_hadd_ps(a, b), _mm256_hadd_ps(c, d));
    _mm_storeu_ps(out, _mm_add_ps(_mm256_castps256_ps128(abcd), _mm256_extractf128_ps(abcd, 1)));
  }
  static TG_EVG_INLINE void store_n(float* p, F x, int n) {
    alignas(32) float lanes[kLanes];
    _mm256_store_ps(lanes, x);
    std::memcpy(p, lanes, size_t(n) * sizeof(float));
  }

  static TG_EVG_INLINE F load(const void* p, ElementType type) {
    switch (type) {
      case ElementType::F32: return _mm256_loadu_ps(static_cast<const float*>(p));
      case ElementType::F16: return _mm256_cvtph_ps(_mm_loadu_si128(static_cast<const __m128i*>(p)));
      case ElementType::BF16:
        return _mm256_castsi256_ps(
            _mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128(static_cast<const __m128i*>(p))), 16));
    }
    return zero();
  }
  // The first n (0 < n <= kLanes) elements, the other lanes 0: copied aside, so that nothing
  // past the n-th element is read.
  static TG_EVG_INLINE F load_n(const void* p, ElementType type, int n) {
    alignas(32) float lanes[kLanes] = {};
    std::memcpy(lanes, p, size_t(n) * size_t(element_bytes(type)));
    return load(lanes, type);
  }

  // In-place 8 x 8 transpose.
  static TG_EVG_INLINE void transpose(F r[kLanes]) {
    F t[8];
#pragma GCC unroll 16
    for (int i = 0; i < 4; ++i) {
      t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
      t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
#pragma GCC unroll 16
    for (int i = 0; i < 2; ++i) {
      r[4 * i] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
      r[4 * i + 1] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0xee);
      r[4 * i + 2] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
      r[4 * i + 3] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xee);
    }
    // 128-bit lane l of r[4i + j] holds column 4l + j of rows 4i .. 4i+3.
#pragma GCC unroll 16
    for (int j = 0; j < 4; ++j) {
      t[j] = _mm256_permute2f128_ps(r[j], r[4 + j], 0x20);
      t[4 + j] = _mm256_permute2f128_ps(r[j], r[4 + j], 0x31);
    }
#pragma GCC unroll 16
    for (int i = 0; i < 8; ++i) r[i] = t[i];
  }
};

#else

// One lane: plain C++ that any compiler vectorises as far as the target allows.
struct Vec {
  using F = float;
  static constexpr int kLanes = 1;

  static TG_EVG_INLINE F zero() { return 0.0f; }
  static TG_EVG_INLINE F set1(float x) { return x; }
  static TG_EVG_INLINE F load(const float* p) { return *p; }
  static TG_EVG_INLINE void store(float* p, F x) { *p = x; }
  static TG_EVG_INLINE F add(F a, F b) { return a + b; }
  static TG_EVG_INLINE F fmadd(F a, F b, F c) { return a * b + c; }
  static TG_EVG_INLINE float reduce(F x) { return x; }
  static TG_EVG_INLINE void reduce4(F a, F b, F c, F d, float* out) {
    out[0] = a;
    out[1] = b;
    out[2] = c;
    out[3] = d;
  }
  static TG_EVG_INLINE void store_n(float* p, F x, int) { *p = x; }
  static TG_EVG_INLINE F load(const void* p, ElementType type) { return load_element(p, type, 0); }
  static TG_EVG_INLINE F load_n(const void* p, ElementType type, int) { return load_element(p, type, 0); }
  static TG_EVG_INLINE void transpose(F*) {}
};

#endif

}  // namespace TG_EVG_TARGET_NAMESPACE
}  // namespace tg::evg::host
