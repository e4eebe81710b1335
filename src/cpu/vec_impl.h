// The row primitives of vec.h, written once against a vector-traits type `V` (simd.h).
//
// Not a normal header: vec_scalar.cpp, vec_avx2.cpp and vec_avx512.cpp each include it inside
// their own namespace, after `using V = ...;` and `constexpr Isa kIsa = ...;` and under their
// `#pragma GCC target`, so every function here is compiled once per instruction set. It includes
// nothing itself (the including file provides <cstring>, <cmath>, <limits>, vec.h, simd.h and
// evg/fusion/math.h before opening the namespace), which keeps library code out of the target
// regions.

constexpr int W = V::kWidth;
using F = V::F;

// Applies fn to whole vectors; the tail goes through a padded vector so it gets the same math.
template <class Fn>
inline void map1(int64_t n, float* y, const float* x, Fn fn) {
  int64_t i = 0;
  for (; i + W <= n; i += W) V::store(y + i, fn(V::load(x + i)));
  if (i < n) {
    float in[W] = {}, out[W];
    std::memcpy(in, x + i, size_t(n - i) * sizeof(float));
    V::store(out, fn(V::load(in)));
    std::memcpy(y + i, out, size_t(n - i) * sizeof(float));
  }
}

template <class Fn>
inline void map2(int64_t n, float* y, const float* a, const float* b, Fn fn) {
  int64_t i = 0;
  for (; i + W <= n; i += W) V::store(y + i, fn(V::load(a + i), V::load(b + i)));
  if (i < n) {
    float in_a[W] = {}, in_b[W] = {}, out[W];
    std::memcpy(in_a, a + i, size_t(n - i) * sizeof(float));
    std::memcpy(in_b, b + i, size_t(n - i) * sizeof(float));
    V::store(out, fn(V::load(in_a), V::load(in_b)));
    std::memcpy(y + i, out, size_t(n - i) * sizeof(float));
  }
}

// The activation math is the EVG's (evg/fusion/math.h), so the backend's ops, its fused chains
// and JIT-compiled EVG epilogues give an element the same bits, whatever the lane count. Its
// functions work on GCC vectors of W lanes: the conversions below reinterpret the register.
using MathF = evg::simd::Vec<float, W>;
inline MathF to_math(F x) { return __builtin_bit_cast(MathF, x); }
inline F from_math(MathF x) { return __builtin_bit_cast(F, x); }
inline F exp_v(F x) { return from_math(evg::math::exp(to_math(x))); }

// ---- conversions ----

void f16_to_f32(int64_t n, float* y, const uint16_t* x) {
  int64_t i = 0;
  for (; i + W <= n; i += W) V::store(y + i, V::load_f16(x + i));
  for (; i < n; ++i) y[i] = V::f16_scalar(x[i]);
}

void f32_to_f16(int64_t n, uint16_t* y, const float* x) {
  int64_t i = 0;
  for (; i + W <= n; i += W) V::store_f16(y + i, V::load(x + i));
  for (; i < n; ++i) y[i] = tg::f32_to_f16(x[i]).bits;
}

void bf16_to_f32(int64_t n, float* y, const uint16_t* x) {
  int64_t i = 0;
  for (; i + W <= n; i += W) V::store(y + i, V::load_bf16(x + i));
  for (; i < n; ++i) y[i] = tg::bf16_to_f32(bf16{x[i]});
}

void f32_to_bf16(int64_t n, uint16_t* y, const float* x) {
  int64_t i = 0;
  for (; i + W <= n; i += W) V::store_bf16(y + i, V::load(x + i));
  for (; i < n; ++i) y[i] = tg::f32_to_bf16(x[i]).bits;
}

// ---- elementwise ----

void binary(BinaryOp op, int64_t n, float* y, const float* a, const float* b) {
  switch (op) {
    case BinaryOp::ADD: return map2(n, y, a, b, [](F p, F q) { return V::add(p, q); });
    case BinaryOp::SUB: return map2(n, y, a, b, [](F p, F q) { return V::sub(p, q); });
    case BinaryOp::MUL: return map2(n, y, a, b, [](F p, F q) { return V::mul(p, q); });
    case BinaryOp::DIV: return map2(n, y, a, b, [](F p, F q) { return V::div(p, q); });
  }
}

void binary_scalar(BinaryOp op, int64_t n, float* y, const float* a, float b) {
  const F q = V::set1(b);
  switch (op) {
    case BinaryOp::ADD: return map1(n, y, a, [q](F p) { return V::add(p, q); });
    case BinaryOp::SUB: return map1(n, y, a, [q](F p) { return V::sub(p, q); });
    case BinaryOp::MUL: return map1(n, y, a, [q](F p) { return V::mul(p, q); });
    case BinaryOp::DIV: return map1(n, y, a, [q](F p) { return V::div(p, q); });
  }
}

void scale(int64_t n, float* y, const float* x, float s, float bias) {
  const F sv = V::set1(s), bv = V::set1(bias);
  map1(n, y, x, [sv, bv](F v) { return V::fmadd(v, sv, bv); });
}

void unary(UnaryOp op, int64_t n, float* y, const float* x) {
  switch (op) {
    // max(v, 0) returns 0 for NaN, as the reference's x > 0 ? x : 0 does.
    case UnaryOp::RELU: return map1(n, y, x, [](F v) { return V::max(v, V::zero()); });
    case UnaryOp::GELU: return map1(n, y, x, [](F v) { return from_math(evg::math::gelu_tanh(to_math(v))); });
    case UnaryOp::GELU_ERF: return map1(n, y, x, [](F v) { return from_math(evg::math::gelu_erf(to_math(v))); });
    case UnaryOp::SILU: return map1(n, y, x, [](F v) { return from_math(evg::math::silu(to_math(v))); });
    case UnaryOp::SIGMOID: return map1(n, y, x, [](F v) { return from_math(evg::math::sigmoid(to_math(v))); });
    case UnaryOp::TANH: return map1(n, y, x, [](F v) { return from_math(evg::math::tanh(to_math(v))); });
    case UnaryOp::EXP: return map1(n, y, x, [](F v) { return exp_v(v); });
    case UnaryOp::NEG: return map1(n, y, x, [](F v) { return V::neg(v); });
    case UnaryOp::ABS: return map1(n, y, x, [](F v) { return V::abs(v); });
    case UnaryOp::SQRT: return map1(n, y, x, [](F v) { return V::sqrt(v); });
    case UnaryOp::RSQRT: return map1(n, y, x, [](F v) { return V::div(V::set1(1.0f), V::sqrt(v)); });
  }
}

void glu(GluOp op, int64_t n, float* y, const float* x, const float* g) {
  switch (op) {
    case GluOp::SWIGLU:
      return map2(n, y, x, g, [](F v, F w) { return V::mul(from_math(evg::math::silu(to_math(v))), w); });
    case GluOp::GEGLU:
      return map2(n, y, x, g, [](F v, F w) { return V::mul(from_math(evg::math::gelu_tanh(to_math(v))), w); });
  }
}

// ---- reductions ----

float sum(int64_t n, const float* x) {
  F acc0 = V::zero(), acc1 = V::zero(), acc2 = V::zero(), acc3 = V::zero();
  int64_t i = 0;
  for (; i + 4 * W <= n; i += 4 * W) {
    acc0 = V::add(acc0, V::load(x + i));
    acc1 = V::add(acc1, V::load(x + i + W));
    acc2 = V::add(acc2, V::load(x + i + 2 * W));
    acc3 = V::add(acc3, V::load(x + i + 3 * W));
  }
  for (; i + W <= n; i += W) acc0 = V::add(acc0, V::load(x + i));
  float total = V::reduce_add(V::add(V::add(acc0, acc1), V::add(acc2, acc3)));
  for (; i < n; ++i) total += x[i];
  return total;
}

float max(int64_t n, const float* x) {
  const F lowest = V::set1(-std::numeric_limits<float>::infinity());
  F acc0 = lowest, acc1 = lowest;
  int64_t i = 0;
  for (; i + 2 * W <= n; i += 2 * W) {
    acc0 = V::max(acc0, V::load(x + i));
    acc1 = V::max(acc1, V::load(x + i + W));
  }
  for (; i + W <= n; i += W) acc0 = V::max(acc0, V::load(x + i));
  float best = V::reduce_max(V::max(acc0, acc1));
  for (; i < n; ++i) best = x[i] > best ? x[i] : best;
  return best;
}

// Sum of (x - center)^2.
inline double sum_squares(int64_t n, const float* x, float center) {
  const F c = V::set1(center);
  F acc0 = V::zero(), acc1 = V::zero();
  int64_t i = 0;
  for (; i + 2 * W <= n; i += 2 * W) {
    const F d0 = V::sub(V::load(x + i), c);
    const F d1 = V::sub(V::load(x + i + W), c);
    acc0 = V::fmadd(d0, d0, acc0);
    acc1 = V::fmadd(d1, d1, acc1);
  }
  for (; i + W <= n; i += W) {
    const F d = V::sub(V::load(x + i), c);
    acc0 = V::fmadd(d, d, acc0);
  }
  double total = V::reduce_add(V::add(acc0, acc1));
  for (; i < n; ++i) total += double(x[i] - center) * double(x[i] - center);
  if (std::isinf(total)) {
    // The f32 partial sums overflowed (values beyond ~1e19): sum in double, as the reference
    // does. An infinite input gives inf here too.
    total = 0;
    for (int64_t j = 0; j < n; ++j) {
      const double d = double(x[j]) - double(center);
      total += d * d;
    }
  }
  return total;
}

void norm(int64_t n, float* y, const float* x, float eps) {
  const float mean = float(double(sum(n, x)) / double(n));
  const float inv_std = float(1.0 / std::sqrt(sum_squares(n, x, mean) / double(n) + double(eps)));
  const F m = V::set1(mean), s = V::set1(inv_std);
  map1(n, y, x, [m, s](F v) { return V::mul(V::sub(v, m), s); });
}

void rms_norm(int64_t n, float* y, const float* x, float eps) {
  const float inv_rms = float(1.0 / std::sqrt(sum_squares(n, x, 0.0f) / double(n) + double(eps)));
  const F s = V::set1(inv_rms);
  map1(n, y, x, [s](F v) { return V::mul(v, s); });
}

float exp_sum(int64_t n, float* y, const float* x, float shift) {
  const F sv = V::set1(shift);
  F acc = V::zero();
  int64_t i = 0;
  for (; i + W <= n; i += W) {
    const F e = exp_v(V::sub(V::load(x + i), sv));
    V::store(y + i, e);
    acc = V::add(acc, e);
  }
  if (i < n) {
    // Padding lanes are -inf so that they add exp(-inf) = 0 to the sum.
    float in[W], out[W];
    for (int j = 0; j < W; ++j) in[j] = -std::numeric_limits<float>::infinity();
    std::memcpy(in, x + i, size_t(n - i) * sizeof(float));
    const F e = exp_v(V::sub(V::load(in), sv));
    V::store(out, e);
    acc = V::add(acc, e);
    std::memcpy(y + i, out, size_t(n - i) * sizeof(float));
  }
  return V::reduce_add(acc);
}

// ---- dot products and axpy ----

// Four independent accumulators hide the FMA latency; `load_a` reads W elements of a at i.
template <class T, class Load, class LoadOne>
inline float dot_generic(int64_t n, const T* a, const float* x, Load load_a, LoadOne scalar_a) {
  F acc0 = V::zero(), acc1 = V::zero(), acc2 = V::zero(), acc3 = V::zero();
  int64_t i = 0;
  for (; i + 4 * W <= n; i += 4 * W) {
    acc0 = V::fmadd(load_a(a + i), V::load(x + i), acc0);
    acc1 = V::fmadd(load_a(a + i + W), V::load(x + i + W), acc1);
    acc2 = V::fmadd(load_a(a + i + 2 * W), V::load(x + i + 2 * W), acc2);
    acc3 = V::fmadd(load_a(a + i + 3 * W), V::load(x + i + 3 * W), acc3);
  }
  for (; i + W <= n; i += W) acc0 = V::fmadd(load_a(a + i), V::load(x + i), acc0);
  float total = V::reduce_add(V::add(V::add(acc0, acc1), V::add(acc2, acc3)));
  for (; i < n; ++i) total += scalar_a(a[i]) * x[i];
  return total;
}

float dot_f32(int64_t n, const float* a, const float* x) {
  return dot_generic(
      n, a, x, [](const float* p) { return V::load(p); }, [](float v) { return v; });
}

void axpy_f32(int64_t n, float* y, float s, const float* x) {
  const F sv = V::set1(s);
  int64_t i = 0;
  for (; i + 2 * W <= n; i += 2 * W) {
    V::store(y + i, V::fmadd(V::load(x + i), sv, V::load(y + i)));
    V::store(y + i + W, V::fmadd(V::load(x + i + W), sv, V::load(y + i + W)));
  }
  for (; i + W <= n; i += W) V::store(y + i, V::fmadd(V::load(x + i), sv, V::load(y + i)));
  for (; i < n; ++i) y[i] += s * x[i];
}

// Rows share each load of x, and their sums stay independent until the end: W rows at a time,
// whose W sums are reduced together (V::reduce_add_rows, much cheaper than W reductions when
// rows are short, as attention heads are), then four at a time. A row's sum has the same bits
// either way: one FMA chain, then the same pairwise reduction.
template <class T, class Load, class LoadOne>
inline void dot_rows_generic(int64_t n, int64_t count, const char* rows, size_t stride, const float* x, float* out,
                             Load load, LoadOne one) {
  auto row = [&](int64_t j) { return reinterpret_cast<const T*>(rows + j * int64_t(stride)); };
  int64_t j = 0;
  if constexpr (W >= 8) {
    // The W rows' sums in groups of 8 rows, each a pass over x: 16 row pointers at once (AVX-512)
    // leave too few general registers, and the spills halved the speed from L2 (f16 on Zen 4).
    constexpr int kGroup = 8;
    const int64_t vectors_end = n - n % W;
    for (; j + W <= count; j += W) {
      F acc[W];
#pragma GCC unroll 2
      for (int g0 = 0; g0 < W; g0 += kGroup) {
        const T* r[kGroup];
#pragma GCC unroll 8
        for (int g = 0; g < kGroup; ++g) {
          r[g] = row(j + g0 + g);
          acc[g0 + g] = V::zero();
        }
        for (int64_t i = 0; i < vectors_end; i += W) {
          const F xv = V::load(x + i);
#pragma GCC unroll 8
          for (int g = 0; g < kGroup; ++g) acc[g0 + g] = V::fmadd(load(r[g] + i), xv, acc[g0 + g]);
        }
      }
      V::reduce_add_rows(acc, out + j);
      for (int64_t i = vectors_end; i < n; ++i) {
        for (int g = 0; g < W; ++g) out[j + g] += one(row(j + g)[i]) * x[i];
      }
    }
  }
  for (; j + 4 <= count; j += 4) {
    const T *r0 = row(j), *r1 = row(j + 1), *r2 = row(j + 2), *r3 = row(j + 3);
    F acc0 = V::zero(), acc1 = V::zero(), acc2 = V::zero(), acc3 = V::zero();
    int64_t i = 0;
    for (; i + W <= n; i += W) {
      const F xv = V::load(x + i);
      acc0 = V::fmadd(load(r0 + i), xv, acc0);
      acc1 = V::fmadd(load(r1 + i), xv, acc1);
      acc2 = V::fmadd(load(r2 + i), xv, acc2);
      acc3 = V::fmadd(load(r3 + i), xv, acc3);
    }
    float s0 = V::reduce_add(acc0), s1 = V::reduce_add(acc1), s2 = V::reduce_add(acc2), s3 = V::reduce_add(acc3);
    for (; i < n; ++i) {
      s0 += one(r0[i]) * x[i];
      s1 += one(r1[i]) * x[i];
      s2 += one(r2[i]) * x[i];
      s3 += one(r3[i]) * x[i];
    }
    out[j] = s0;
    out[j + 1] = s1;
    out[j + 2] = s2;
    out[j + 3] = s3;
  }
  for (; j < count; ++j) out[j] = dot_generic(n, row(j), x, load, one);
}

// y[i .. i + kVecs W) in registers while every row adds to it: kVecs independent FMA chains, so
// a short y (an attention head of 64 on AVX-512 is 4 vectors) is not bound by one chain's latency.
template <int kVecs, class T, class Row, class Load>
inline void axpy_rows_chunk(int64_t i, int64_t count, Row row, const float* s, float* y, Load load) {
  F acc[kVecs];
#pragma GCC unroll 8
  for (int v = 0; v < kVecs; ++v) acc[v] = V::load(y + i + v * W);
  for (int64_t j = 0; j < count; ++j) {
    if (s[j] == 0.0f) continue;
    const F sv = V::set1(s[j]);
    const T* r = row(j) + i;
#pragma GCC unroll 8
    for (int v = 0; v < kVecs; ++v) acc[v] = V::fmadd(load(r + v * W), sv, acc[v]);
  }
#pragma GCC unroll 8
  for (int v = 0; v < kVecs; ++v) V::store(y + i + v * W, acc[v]);
}

// y is walked in chunks of 8 vectors, then one of 4, 2 and 1 for what is left.
template <class T, class Load, class LoadOne>
inline void axpy_rows_generic(int64_t n, int64_t count, const char* rows, size_t stride, const float* s, float* y,
                              Load load, LoadOne one) {
  auto row = [&](int64_t j) { return reinterpret_cast<const T*>(rows + j * int64_t(stride)); };
  int64_t i = 0;
  for (; i + 8 * W <= n; i += 8 * W) axpy_rows_chunk<8, T>(i, count, row, s, y, load);
  if (i + 4 * W <= n) {
    axpy_rows_chunk<4, T>(i, count, row, s, y, load);
    i += 4 * W;
  }
  if (i + 2 * W <= n) {
    axpy_rows_chunk<2, T>(i, count, row, s, y, load);
    i += 2 * W;
  }
  if (i + W <= n) {
    axpy_rows_chunk<1, T>(i, count, row, s, y, load);
    i += W;
  }
  for (; i < n; ++i) {
    float acc = y[i];
    for (int64_t j = 0; j < count; ++j) acc += s[j] * one(row(j)[i]);
    y[i] = acc;
  }
}

// Calls fn(element type tag, load, load_one) with the loaders of `type` (f32, f16 or bf16).
template <class Fn>
inline void with_loaders(DType type, Fn fn) {
  switch (type) {
    case DType::F16:
      return fn(
          uint16_t{}, [](const uint16_t* p) { return V::load_f16(p); }, [](uint16_t v) { return V::f16_scalar(v); });
    case DType::BF16:
      return fn(
          uint16_t{}, [](const uint16_t* p) { return V::load_bf16(p); },
          [](uint16_t v) { return tg::bf16_to_f32(bf16{v}); });
    default:
      return fn(
          float{}, [](const float* p) { return V::load(p); }, [](float v) { return v; });
  }
}

void dot_rows(DType type, int64_t n, int64_t count, const void* rows, size_t stride, const float* x, float* out) {
  with_loaders(type, [&](auto tag, auto load, auto one) {
    dot_rows_generic<decltype(tag)>(n, count, static_cast<const char*>(rows), stride, x, out, load, one);
  });
}

void axpy_rows(DType type, int64_t n, int64_t count, const void* rows, size_t stride, const float* s, float* y) {
  with_loaders(type, [&](auto tag, auto load, auto one) {
    axpy_rows_generic<decltype(tag)>(n, count, static_cast<const char*>(rows), stride, s, y, load, one);
  });
}

// ---- quantized blocks ----

// One decoder per quantized type: a Block holds kElems elements; Scales is what the block's
// vectors share (its scales as f32), worked out once per block and row; vec(block, scales, v) is
// elements [v W, v W + W) as f32 with the values of the core's dequantize_row_* (quant.h): every
// value is q * step + bias with an exact product, so the fused multiply-add rounds once, where the
// core's expression does (only a zero's sign may differ). W divides 16, so a vector never
// straddles a nibble half or a sub-block.
using I = V::I;

// Elements [e, e + W) of 32 stored as byte j = element j (low nibble), j + 16 (high nibble).
inline I nibbles_32(const uint8_t* qs, int e) {
  const I bytes = V::load_u8(qs + e % 16);
  return e < 16 ? V::and_i(bytes, 0xF) : V::srl_i(bytes, 4);
}

// Elements [e, e + W) of a q4_K/q5_K block's 4-bit quants: chunk c = e / 64 is bytes 32c..32c+31,
// its first 32 elements in the low nibbles.
inline I nibbles_k(const uint8_t* qs, int e) {
  const I bytes = V::load_u8(qs + 32 * (e / 64) + e % 32);
  return e % 64 < 32 ? V::and_i(bytes, 0xF) : V::srl_i(bytes, 4);
}

#include "vec_impl_int_tiles.h"

struct DecodeQ8_0 {
  using Block = BlockQ8_0;
  static constexpr int kElems = kQ8_0BlockSize;
  struct Scales {
    F d;
  };
  static Scales scales(const Block& b, const float* f16) { return {V::set1(f16[b.d.bits])}; }
  static F vec(const Block& b, const Scales& s, int v) { return V::mul(V::load_i8(b.qs + v * W), s.d); }
};

// q4_0 and q4_1: 4-bit quants, elements j and j + 16 in byte j; q5_0 and q5_1 (kHighBit): the
// same with the 5th bit of element j at bit j of qh.
template <class B, bool kHighBit>
struct DecodeBlock32 {
  using Block = B;
  static constexpr int kElems = 32;
  struct Scales {
    F step, offset;
  };
  static Scales scales(const Block& b, const float* f16) {
    return {V::set1(block_step(b, f16)), V::set1(block_offset(b, f16))};
  }
  static F vec(const Block& b, const Scales& s, int v) {
    const int e = v * W;
    I q = nibbles_32(b.qs, e);
    if constexpr (kHighBit) q = V::or_i(q, V::select_bits(load_u32(b.qh), e, 16));
    return V::fmadd(V::to_float(q), s.step, s.offset);
  }
};

// q4_K and q5_K share their scales: sub-block s (32 elements) is d*sc_s * q - dmin*m_s.
struct ScalesK {
  alignas(64) float step[8];
  float bias[8];
};

// out[i] = bytes[i] * (i < 8 ? low : high) for 16 bytes, converted a vector at a time.
template <class U = V>
inline void scale_16_bytes(const uint8_t* bytes, float low, float high, float* out) {
  if constexpr (U::kWidth == 16) {
    U::store(out, U::mul(U::to_float(U::load_u8(bytes)), U::halves(low, high)));
  } else {
    for (int i = 0; i < 16; i += U::kWidth) {
      U::store(out + i, U::mul(U::to_float(U::load_u8(bytes + i)), U::set1(i < 8 ? low : high)));
    }
  }
}

template <class Block>
inline ScalesK scales_k(const Block& b, const float* f16) {
  uint8_t sc_m[16];
  simd::unpack_scales_mins_k(b.scales, sc_m);
  ScalesK s;
  static_assert(offsetof(ScalesK, bias) == 8 * sizeof(float));
  scale_16_bytes(sc_m, f16[b.d.bits], -f16[b.dmin.bits], s.step);
  return s;
}

// q4_K, and q5_K (kHighBit) with the 5th bit of element 64c + l at bit 2c of qh[l], of
// 64c + 32 + l at bit 2c + 1.
template <class B, bool kHighBit>
struct DecodeAffineK {
  using Block = B;
  static constexpr int kElems = kQKBlockSize;
  using Scales = ScalesK;
  static Scales scales(const Block& b, const float* f16) { return scales_k(b, f16); }
  static F vec(const Block& b, const Scales& s, int v) {
    const int e = v * W;
    I q = nibbles_k(b.qs, e);
    if constexpr (kHighBit) {
      const I qh = V::load_u8(b.qh + e % 32);
      const int bit = e / 32;  // shifted to bit 4
      q = V::or_masked(q, bit <= 4 ? V::sll_i(qh, 4 - bit) : V::srl_i(qh, bit - 4), 0x10);
    }
    return V::fmadd(V::to_float(q), V::set1(s.step[e / 32]), V::set1(s.bias[e / 32]));
  }
};

struct DecodeQ6_K {
  using Block = BlockQ6_K;
  static constexpr int kElems = kQKBlockSize;
  // Sub-block s (16 elements) is step_s * q + bias_s, step_s = d*sc_s, bias_s = -32 step_s.
  struct Scales {
    alignas(64) float step[16];
    float bias[16];
  };
  static Scales scales(const Block& b, const float* f16) {
    const F d = V::set1(f16[b.d.bits]);
    Scales s;
    for (int i = 0; i < 16; i += W) {
      const F step = V::mul(V::load_i8(b.scales + i), d);
      V::store(s.step + i, step);
      V::store(s.bias + i, V::mul(step, V::set1(-32.0f)));
    }
    return s;
  }
  static F vec(const Block& b, const Scales& s, int v) {
    // Half h = e / 128; quarter g of it, l = e % 32: low bits in ql[64h + 32(g % 2) + l] (low
    // nibble for g < 2), high 2 bits at bit 2g of qh[32h + l], moved to bits 4-5 in one shift.
    const int e = v * W, h = e / 128, g = e % 128 / 32, l = e % 32;
    const I low_bytes = V::load_u8(b.ql + 64 * h + 32 * (g % 2) + l);
    const I low = g < 2 ? V::and_i(low_bytes, 0xF) : V::srl_i(low_bytes, 4);
    const I qh = V::load_u8(b.qh + 32 * h + l);
    const I high = g < 2 ? V::sll_i(qh, 4 - 2 * g) : g == 2 ? qh : V::srl_i(qh, 2);
    const I q = V::or_masked(low, high, 0x30);
    return V::fmadd(V::to_float(q), V::set1(s.step[e / 16]), V::set1(s.bias[e / 16]));
  }
};

// Calls fn(Decoder{}) with the decoder of quantized `type`.
template <class Fn>
inline void with_decoder(DType type, Fn fn) {
  switch (type) {
    case DType::Q8_0: return fn(DecodeQ8_0{});
    case DType::Q4_0: return fn(DecodeBlock32<BlockQ4_0, false>{});
    case DType::Q4_1: return fn(DecodeBlock32<BlockQ4_1, false>{});
    case DType::Q5_0: return fn(DecodeBlock32<BlockQ5_0, true>{});
    case DType::Q5_1: return fn(DecodeBlock32<BlockQ5_1, true>{});
    case DType::Q4_K: return fn(DecodeAffineK<BlockQ4_K, false>{});
    case DType::Q5_K: return fn(DecodeAffineK<BlockQ5_K, true>{});
    case DType::Q6_K: return fn(DecodeQ6_K{});
    default: break;
  }
  throw_wrong_quant_type(type, "dequantize");
}

void dequantize(DType type, int64_t n, float* y, const void* x) {
  with_decoder(type, [&]<class Q>(Q) {
    const auto* blocks = static_cast<const typename Q::Block*>(x);
    const float* f16_table = f16_to_f32_table();
    for (int64_t b = 0; b < n / Q::kElems; ++b) {
      const typename Q::Scales s = Q::scales(blocks[b], f16_table);
      float* out = y + b * Q::kElems;
#pragma GCC unroll 16
      for (int v = 0; v < Q::kElems / W; ++v) V::store(out + v * W, Q::vec(blocks[b], s, v));
    }
  });
}

#include "vec_impl_int_dot.h"
#include "vec_impl_int_gemm.h"
#include "vec_impl_interleaved.h"

// ---- rope ----

// Whole vectors of rope_pairs; returns how many elements it did. A template so that the
// one-lane ISA, which has no pairs to swap, never instantiates the vector code.
template <class U>
inline int64_t rope_pairs_vectors(int64_t n_dims, float* y, const float* x, const float* cos_dup,
                                  const float* sin_signed) {
  int64_t i = 0;
  if constexpr (U::kWidth > 1) {
    for (; i + U::kWidth <= n_dims; i += U::kWidth) {
      const typename U::F v = U::load(x + i);
      U::store(y + i, U::fmadd(U::swap_pairs(v), U::load(sin_signed + i), U::mul(v, U::load(cos_dup + i))));
    }
  }
  return i;
}

void rope_pairs(int64_t n_dims, float* y, const float* x, const float* cos_dup, const float* sin_signed) {
  for (int64_t i = rope_pairs_vectors<V>(n_dims, y, x, cos_dup, sin_signed); i < n_dims; i += 2) {
    const float x0 = x[i], x1 = x[i + 1];
    const float c = cos_dup[i], s = sin_signed[i + 1];
    y[i] = x0 * c - x1 * s;
    y[i + 1] = x1 * c + x0 * s;
  }
}

void rope_halves(int64_t n_dims, float* y, const float* x, const float* cos, const float* sin) {
  const int64_t half = n_dims / 2;
  int64_t i = 0;
  for (; i + W <= half; i += W) {
    const F x0 = V::load(x + i), x1 = V::load(x + i + half);
    const F c = V::load(cos + i), s = V::load(sin + i);
    V::store(y + i, V::fnmadd(x1, s, V::mul(x0, c)));
    V::store(y + i + half, V::fmadd(x0, s, V::mul(x1, c)));
  }
  for (; i < half; ++i) {
    const float x0 = x[i], x1 = x[i + half];
    y[i] = x0 * cos[i] - x1 * sin[i];
    y[i + half] = x0 * sin[i] + x1 * cos[i];
  }
}

// Constant-initialised: no code of this target runs to build it.
constexpr VecKernels kVecKernels{
    .isa = kIsa,
    .f16_to_f32 = f16_to_f32,
    .f32_to_f16 = f32_to_f16,
    .bf16_to_f32 = bf16_to_f32,
    .f32_to_bf16 = f32_to_bf16,
    .dequantize = dequantize,
    .binary = binary,
    .binary_scalar = binary_scalar,
    .scale = scale,
    .unary = unary,
    .glu = glu,
    .sum = sum,
    .max = max,
    .norm = norm,
    .rms_norm = rms_norm,
    .exp_sum = exp_sum,
    .dot_f32 = dot_f32,
    .axpy_f32 = axpy_f32,
    .dot_rows = dot_rows,
    .dot_q8k_rows = dot_q8k_rows,
    .dot_q8_32_rows = dot_q8_32_rows,
    .dot_interleaved_rows = dot_interleaved_rows,
    .quantize_q8k = quantize_q8k,
    .quantize_q8_32 = quantize_q8_32,
    .quant_panel_rows = GL::kLanes,
    .quant_tile_tokens = GL::kTileTokens,
    .pack_quant_panel = pack_quant_panel,
    .pack_quant_activations = pack_quant_activations,
    .quant_gemm_tiles = quant_gemm_tiles,
    .axpy_rows = axpy_rows,
    .rope_pairs = rope_pairs,
    .rope_halves = rope_halves,
};
