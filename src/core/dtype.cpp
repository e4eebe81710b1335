#include "tilegraph/core/dtype.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <string>

#include "tilegraph/core/error.h"
#include "tilegraph/core/quant.h"

namespace tg {

namespace {

constexpr DTypeTraits kTraits[kDTypeCount] = {
    {"f32", 1, sizeof(float), true},
    {"f16", 1, sizeof(uint16_t), true},
    {"bf16", 1, sizeof(uint16_t), true},
    {"i32", 1, sizeof(int32_t), false},
    {"q8_0", kQ8_0BlockSize, sizeof(BlockQ8_0), false},
    {"q4_0", kQ4_0BlockSize, sizeof(BlockQ4_0), false},
    {"q4_1", kQ4_1BlockSize, sizeof(BlockQ4_1), false},
    {"q5_0", kQ5_0BlockSize, sizeof(BlockQ5_0), false},
    {"q5_1", kQ5_1BlockSize, sizeof(BlockQ5_1), false},
    {"q4_K", kQKBlockSize, sizeof(BlockQ4_K), false},
    {"q5_K", kQKBlockSize, sizeof(BlockQ5_K), false},
    {"q6_K", kQKBlockSize, sizeof(BlockQ6_K), false},
};

char lower(char c) { return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c; }

bool equal_ignoring_case(std::string_view a, std::string_view b) {
  return std::ranges::equal(a, b, [](char x, char y) { return lower(x) == lower(y); });
}

}  // namespace

const DTypeTraits& dtype_traits(DType type) {
  const int index = int(type);
  if (index < 0 || index >= kDTypeCount) throw Error("unknown dtype " + std::to_string(index));
  return kTraits[index];
}

size_t row_size(DType type, int64_t ne0) {
  const DTypeTraits& t = dtype_traits(type);
  if (t.block_size == 1 && ne0 >= 0) return size_t(ne0) * t.type_size;  // no division on the hot path
  if (ne0 < 0 || ne0 % int64_t(t.block_size) != 0) {
    throw Error(std::string(t.name) + ": a row of " + std::to_string(ne0) +
                " elements is not a whole number of blocks of " + std::to_string(t.block_size));
  }
  return size_t(ne0) / t.block_size * t.type_size;
}

DType parse_dtype(std::string_view name) {
  std::string names;
  for (int i = 0; i < kDTypeCount; ++i) {
    if (equal_ignoring_case(kTraits[i].name, name)) return DType(i);
    names += (i ? ", " : "") + std::string(kTraits[i].name);
  }
  throw Error("unknown dtype '" + std::string(name) + "' (expected one of " + names + ")");
}

f16 f32_to_f16(float value) {
  const uint32_t x = std::bit_cast<uint32_t>(value);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // inf or NaN; keep NaN quiet and non-zero
    return f16{uint16_t(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u | ((abs >> 13) & 0x3ffu) : 0u))};
  }
  if (abs >= 0x477ff000u) return f16{uint16_t(sign | 0x7c00u)};  // rounds to >= 65520: overflow
  if (abs < 0x38800000u) {
    // Subnormal half (or zero): shift the full significand into place and round to nearest even.
    if (abs < 0x33000000u) return f16{uint16_t(sign)};  // below half the smallest subnormal
    const uint32_t exponent = abs >> 23;
    const uint32_t mantissa = (abs & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - exponent;  // 14..24 for this range
    const uint32_t kept = mantissa >> shift;
    const uint32_t rest = mantissa & ((1u << shift) - 1);
    const uint32_t halfway = 1u << (shift - 1);
    const uint32_t rounded = kept + ((rest > halfway || (rest == halfway && (kept & 1u))) ? 1u : 0u);
    return f16{uint16_t(sign | rounded)};
  }
  // Normal: rebias the exponent, round the 13 dropped bits to nearest even (a carry into the
  // exponent is the correct result).
  const uint32_t rebased = abs - ((127u - 15u) << 23);
  const uint32_t kept = rebased >> 13;
  const uint32_t rest = rebased & 0x1fffu;
  const uint32_t rounded = kept + ((rest > 0x1000u || (rest == 0x1000u && (kept & 1u))) ? 1u : 0u);
  return f16{uint16_t(sign | rounded)};
}

float f16_to_f32(f16 value) {
  const uint32_t sign = uint32_t(value.bits & 0x8000u) << 16;
  const uint32_t exponent = (value.bits >> 10) & 0x1fu;
  const uint32_t mantissa = value.bits & 0x3ffu;
  if (exponent == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  if (exponent == 0) {
    const float magnitude = std::ldexp(float(mantissa), -24);  // subnormal or zero, exact
    return sign ? -magnitude : magnitude;
  }
  return std::bit_cast<float>(sign | ((exponent + 127 - 15) << 23) | (mantissa << 13));
}

bf16 f32_to_bf16(float value) {
  const uint32_t x = std::bit_cast<uint32_t>(value);
  if ((x & 0x7fffffffu) > 0x7f800000u) return bf16{uint16_t((x >> 16) | 0x40u)};  // quiet NaN
  const uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
  return bf16{uint16_t((x + rounding) >> 16)};
}

void quantize_row_q8_0(const float* x, BlockQ8_0* y, int64_t n) {
  if (n % kQ8_0BlockSize != 0) throw Error("quantize_row_q8_0: n is not a multiple of 32");
  for (int64_t b = 0; b < n / kQ8_0BlockSize; ++b) {
    const float* block = x + b * kQ8_0BlockSize;
    float amax = 0.0f;
    for (int i = 0; i < kQ8_0BlockSize; ++i) amax = std::fmax(amax, std::fabs(block[i]));
    const float d = amax / 127.0f;
    const float inverse = d != 0.0f ? 1.0f / d : 0.0f;
    y[b].d = f32_to_f16(d);
    for (int i = 0; i < kQ8_0BlockSize; ++i) {
      y[b].qs[i] = int8_t(std::lround(block[i] * inverse));
    }
  }
}

void dequantize_row_q8_0(const BlockQ8_0* x, float* y, int64_t n) {
  if (n % kQ8_0BlockSize != 0) throw Error("dequantize_row_q8_0: n is not a multiple of 32");
  for (int64_t b = 0; b < n / kQ8_0BlockSize; ++b) {
    const float d = f16_to_f32(x[b].d);
    for (int i = 0; i < kQ8_0BlockSize; ++i) y[b * kQ8_0BlockSize + i] = float(x[b].qs[i]) * d;
  }
}

void row_to_f32(DType type, const void* src, float* dst, int64_t n) {
  switch (type) {
    case DType::F32: std::copy_n(static_cast<const float*>(src), n, dst); return;
    case DType::F16:
      for (int64_t i = 0; i < n; ++i) dst[i] = f16_to_f32(static_cast<const f16*>(src)[i]);
      return;
    case DType::BF16:
      for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_f32(static_cast<const bf16*>(src)[i]);
      return;
    case DType::I32:
      for (int64_t i = 0; i < n; ++i) dst[i] = float(static_cast<const int32_t*>(src)[i]);
      return;
    case DType::Q8_0: dequantize_row_q8_0(static_cast<const BlockQ8_0*>(src), dst, n); return;
    case DType::Q4_0: dequantize_row_q4_0(static_cast<const BlockQ4_0*>(src), dst, n); return;
    case DType::Q4_1: dequantize_row_q4_1(static_cast<const BlockQ4_1*>(src), dst, n); return;
    case DType::Q5_0: dequantize_row_q5_0(static_cast<const BlockQ5_0*>(src), dst, n); return;
    case DType::Q5_1: dequantize_row_q5_1(static_cast<const BlockQ5_1*>(src), dst, n); return;
    case DType::Q4_K: dequantize_row_q4_K(static_cast<const BlockQ4_K*>(src), dst, n); return;
    case DType::Q5_K: dequantize_row_q5_K(static_cast<const BlockQ5_K*>(src), dst, n); return;
    case DType::Q6_K: dequantize_row_q6_K(static_cast<const BlockQ6_K*>(src), dst, n); return;
  }
  throw Error("row_to_f32: unknown dtype");
}

void row_from_f32(DType type, const float* src, void* dst, int64_t n) {
  switch (type) {
    case DType::F32: std::copy_n(src, n, static_cast<float*>(dst)); return;
    case DType::F16:
      for (int64_t i = 0; i < n; ++i) static_cast<f16*>(dst)[i] = f32_to_f16(src[i]);
      return;
    case DType::BF16:
      for (int64_t i = 0; i < n; ++i) static_cast<bf16*>(dst)[i] = f32_to_bf16(src[i]);
      return;
    case DType::I32:
      for (int64_t i = 0; i < n; ++i) static_cast<int32_t*>(dst)[i] = int32_t(std::lrint(src[i]));
      return;
    case DType::Q8_0: quantize_row_q8_0(src, static_cast<BlockQ8_0*>(dst), n); return;
    case DType::Q4_0: quantize_row_q4_0(src, static_cast<BlockQ4_0*>(dst), n); return;
    case DType::Q4_1: quantize_row_q4_1(src, static_cast<BlockQ4_1*>(dst), n); return;
    case DType::Q5_0: quantize_row_q5_0(src, static_cast<BlockQ5_0*>(dst), n); return;
    case DType::Q5_1: quantize_row_q5_1(src, static_cast<BlockQ5_1*>(dst), n); return;
    case DType::Q4_K: quantize_row_q4_K(src, static_cast<BlockQ4_K*>(dst), n); return;
    case DType::Q5_K: quantize_row_q5_K(src, static_cast<BlockQ5_K*>(dst), n); return;
    case DType::Q6_K: quantize_row_q6_K(src, static_cast<BlockQ6_K*>(dst), n); return;
  }
  throw Error("row_from_f32: unknown dtype");
}

}  // namespace tg
