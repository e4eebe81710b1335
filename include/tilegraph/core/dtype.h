#pragma once
// Element types and their scalar conversions. f16/bf16 conversions round to nearest even;
// q8_0 stores blocks of 32 values as one f16 scale and 32 int8 quants, and the other quantized
// types (quant.h) blocks of 4 to 6-bit quants with their scales: ggml's layouts, so GGUF files
// are read without conversion.
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace tg {

enum class DType : int32_t { F32, F16, BF16, I32, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K };
inline constexpr int kDTypeCount = 12;

struct DTypeTraits {
  std::string_view name;
  size_t block_size;  // elements per block (1 for plain types)
  size_t type_size;   // bytes per block
  bool is_float;      // f32/f16/bf16
};

const DTypeTraits& dtype_traits(DType type);
// ggml's names: "f32", "f16", "bf16", "i32", "q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "q4_K",
// "q5_K", "q6_K".
inline std::string_view dtype_name(DType type) { return dtype_traits(type).name; }
// Stored in blocks of several elements (q8_0 and quant.h's types): rows are whole blocks, and a
// block's elements are never addressed apart from it (nb[0] is the block's stride).
inline bool is_quantized(DType type) { return dtype_traits(type).block_size > 1; }
// Bytes of a row of `ne0` elements; throws if ne0 is not a multiple of the block size.
size_t row_size(DType type, int64_t ne0);
// Parses a dtype name in any letter case ("q4_k" is q4_K); throws tg::Error listing the names.
DType parse_dtype(std::string_view name);

// IEEE binary16, stored as bits.
struct f16 {
  uint16_t bits;
};
// bfloat16, stored as bits.
struct bf16 {
  uint16_t bits;
};

f16 f32_to_f16(float value);
float f16_to_f32(f16 value);
bf16 f32_to_bf16(float value);
inline float bf16_to_f32(bf16 value) {
  uint32_t u = uint32_t(value.bits) << 16;
  float f;
  __builtin_memcpy(&f, &u, sizeof f);
  return f;
}

inline constexpr int kQ8_0BlockSize = 32;
struct BlockQ8_0 {
  f16 d;                      // scale: max|x| / 127
  int8_t qs[kQ8_0BlockSize];  // quants: round-half-away-from-zero(x / d)
};
static_assert(sizeof(BlockQ8_0) == 34, "q8_0 block must match ggml's 34-byte layout");

// Row conversions. `n` is the element count; for q8_0 it must be a multiple of 32.
void quantize_row_q8_0(const float* x, BlockQ8_0* y, int64_t n);
void dequantize_row_q8_0(const BlockQ8_0* x, float* y, int64_t n);
// Converts a contiguous row of `n` elements of `type` to f32 (and back). I32 converts by value;
// quantized types need n to be a multiple of their block size and quantize as quant.h says.
void row_to_f32(DType type, const void* src, float* dst, int64_t n);
void row_from_f32(DType type, const float* src, void* dst, int64_t n);

}  // namespace tg
