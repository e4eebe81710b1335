#pragma once
// The block-quantized types of GGUF files besides q8_0 (dtype.h): ggml's byte layouts, so tensors
// are used straight from a mapped file. Each block holds `block size` consecutive elements of a
// row; a row is a whole number of blocks.
//
//   type  elements  bytes  value of element i
//   q4_0  32        18     d * (q_i - 8)                q_i 4 bits
//   q4_1  32        20     d * q_i + m                  q_i 4 bits
//   q5_0  32        22     d * (q_i - 16)               q_i 5 bits (high bit in qh)
//   q5_1  32        24     d * q_i + m                  q_i 5 bits (high bit in qh)
//   q4_K  256       144    d*sc_s * q_i - dmin*m_s      q_i 4 bits; 8 sub-blocks s of 32 with
//                                                       6-bit sc_s and m_s
//   q5_K  256       176    as q4_K                      q_i 5 bits (high bit in qh)
//   q6_K  256       210    d*sc_s * (q_i - 32)          q_i 6 bits; 16 sub-blocks of 16, int8 sc_s
//
// Where the bits live (the part easiest to get wrong, so spelled out):
// - q4_0..q5_1: byte j of qs holds element j in its low nibble and element j + 16 in its high
//   nibble; bit j of qh (read as a little-endian uint32) is the 5th bit of element j.
// - q4_K/q5_K: the block is 4 chunks of 64; chunk c's qs bytes 32c..32c+31 hold elements
//   64c + l (low nibble) and 64c + 32 + l (high nibble); q5_K's qh[l] bit 2c is the 5th bit of
//   element 64c + l and bit 2c + 1 that of 64c + 32 + l. Sub-block s = element / 32.
// - q6_K: the block is 2 halves of 128; in half h, for l < 32, ql[64h + l] holds elements
//   128h + l (low) and 128h + 64 + l (high), ql[64h + 32 + l] elements 128h + 32 + l (low) and
//   128h + 96 + l (high), and qh[32h + l] their top 2 bits, at bits 0, 2, 4, 6 for elements
//   128h + l, +32, +64, +96. Sub-block s = element / 16.
#include <cstddef>
#include <cstdint>

#include "tilegraph/core/dtype.h"

namespace tg {

inline constexpr int kQ4_0BlockSize = 32;
inline constexpr int kQ4_1BlockSize = 32;
inline constexpr int kQ5_0BlockSize = 32;
inline constexpr int kQ5_1BlockSize = 32;
// The K types' super-block (ggml's QK_K).
inline constexpr int kQKBlockSize = 256;

struct BlockQ4_0 {
  f16 d;
  uint8_t qs[kQ4_0BlockSize / 2];
};
struct BlockQ4_1 {
  f16 d;
  f16 m;
  uint8_t qs[kQ4_1BlockSize / 2];
};
struct BlockQ5_0 {
  f16 d;
  uint8_t qh[4];
  uint8_t qs[kQ5_0BlockSize / 2];
};
struct BlockQ5_1 {
  f16 d;
  f16 m;
  uint8_t qh[4];
  uint8_t qs[kQ5_1BlockSize / 2];
};
struct BlockQ4_K {
  f16 d;               // scale of the sub-block scales
  f16 dmin;            // scale of the sub-block mins
  uint8_t scales[12];  // 8 6-bit scales and 8 6-bit mins, packed (unpack_scale_min_k)
  uint8_t qs[kQKBlockSize / 2];
};
struct BlockQ5_K {
  f16 d;
  f16 dmin;
  uint8_t scales[12];
  uint8_t qh[kQKBlockSize / 8];
  uint8_t qs[kQKBlockSize / 2];
};
struct BlockQ6_K {
  uint8_t ql[kQKBlockSize / 2];
  uint8_t qh[kQKBlockSize / 4];
  int8_t scales[kQKBlockSize / 16];
  f16 d;
};
static_assert(sizeof(BlockQ4_0) == 18, "q4_0 block must match ggml's 18-byte layout");
static_assert(sizeof(BlockQ4_1) == 20, "q4_1 block must match ggml's 20-byte layout");
static_assert(sizeof(BlockQ5_0) == 22, "q5_0 block must match ggml's 22-byte layout");
static_assert(sizeof(BlockQ5_1) == 24, "q5_1 block must match ggml's 24-byte layout");
static_assert(sizeof(BlockQ4_K) == 144, "q4_K block must match ggml's 144-byte layout");
static_assert(sizeof(BlockQ5_K) == 176, "q5_K block must match ggml's 176-byte layout");
static_assert(sizeof(BlockQ6_K) == 210, "q6_K block must match ggml's 210-byte layout");
// Bounds over every quantized type (q8_0 included), for buffers holding one block.
inline constexpr int kMaxBlockSize = kQKBlockSize;
inline constexpr size_t kMaxBlockBytes = sizeof(BlockQ6_K);
static_assert(kMaxBlockBytes >= sizeof(BlockQ5_K) && kMaxBlockBytes >= sizeof(BlockQ8_0));

// Sub-block s's 6-bit scale and min of a q4_K/q5_K block: s < 4 in the low 6 bits of bytes s and
// s + 4; s >= 4 in the nibbles of byte s + 4 with their top 2 bits in the spare top bits of bytes
// s - 4 (scale) and s (min).
inline void unpack_scale_min_k(const uint8_t* scales, int s, int* sc, int* m) {
  if (s < 4) {
    *sc = scales[s] & 63;
    *m = scales[s + 4] & 63;
  } else {
    *sc = (scales[s + 4] & 0xF) | (scales[s - 4] >> 6) << 4;
    *m = (scales[s + 4] >> 4) | (scales[s] >> 6) << 4;
  }
}

// Row conversions; `n` must be a multiple of the type's block size (else tg::Error).
//
// The quantizers round to nearest and produce valid encodings; how close they get:
// - q4_0/q5_0 (ggml's rule): d = -(the value of largest magnitude) / 8 (/ 16), so that value is
//   exact and the others are within d/2, except values of the opposite sign beyond 7d (15d),
//   clamped to the top quant: within |d|.
// - q4_1/q5_1: d = (max - min) / 15 (/ 31), m = min: within d/2 (plus the f16 rounding of d and m).
// - q4_K/q5_K (a simpler rule than ggml's search): sub-block s spans [min(0, min x), max x], its
//   step is that range / 15 (/ 31); the 6-bit scales are rounded up so the span stays covered.
//   Error within (step_s + D) / 2 + M, D and M the super-block scales (largest step / 63, largest
//   -min / 63, as stored: rounded up to an f16).
// - q6_K (also simpler than ggml's): sub-block step = max|x| / 31 (quants -31..31), its int8 scale
//   rounded up: error within (step_s + D) / 2, D = largest step / 127 (rounded up to an f16).
void quantize_row_q4_0(const float* x, BlockQ4_0* y, int64_t n);
void dequantize_row_q4_0(const BlockQ4_0* x, float* y, int64_t n);
void quantize_row_q4_1(const float* x, BlockQ4_1* y, int64_t n);
void dequantize_row_q4_1(const BlockQ4_1* x, float* y, int64_t n);
void quantize_row_q5_0(const float* x, BlockQ5_0* y, int64_t n);
void dequantize_row_q5_0(const BlockQ5_0* x, float* y, int64_t n);
void quantize_row_q5_1(const float* x, BlockQ5_1* y, int64_t n);
void dequantize_row_q5_1(const BlockQ5_1* x, float* y, int64_t n);
void quantize_row_q4_K(const float* x, BlockQ4_K* y, int64_t n);
void dequantize_row_q4_K(const BlockQ4_K* x, float* y, int64_t n);
void quantize_row_q5_K(const float* x, BlockQ5_K* y, int64_t n);
void dequantize_row_q5_K(const BlockQ5_K* x, float* y, int64_t n);
void quantize_row_q6_K(const float* x, BlockQ6_K* y, int64_t n);
void dequantize_row_q6_K(const BlockQ6_K* x, float* y, int64_t n);

// ---- The activations of quantized matrix products ----
//
// MUL_MAT with quantized weights multiplies them by its activations rounded to 8 bits, as ggml
// does (their vec_dot_type): every backend and path computes sum_i w_i * d q_i, so the products
// of the quants are exact integer sums, which is what makes quantized decode and prefill fast.
// bf16 weights take the activations rounded to bf16 (nearest even), as ggml's vec_dot_type for
// bf16 does: products of two bf16 are exact in f32, and a CPU with a bf16 dot product
// (AVX512_BF16) adds two of them per lane and instruction. f32 and f16 weights take the f32
// activations as they are.
//
// One rule per block: d = max|x| / 127 and q_i = nearest-even(x_i / d), clamped to -127..127 (a
// subnormal d is inexact); d = 0 when it would be 0 or subnormal-small enough to lose every
// value, and NaN (all q 0) when the block holds an inf or NaN, so its products are NaN. Formats:
// - q8_K (256 elements, ggml's layout) for q4_K, q5_K and q6_K: with the sum of each 16 quants,
//   for the part of a weight that does not depend on its quant (the mins, q6_K's -32).
// - q8_32 (32 elements) for q8_0, q4_0, q4_1, q5_0 and q5_1: ggml's q8_0 / q8_1, whose d is
//   f16: the quants are those of the f32 d, then d is rounded to the nearest f16 (q8_32_step; a
//   block beyond f16's range, max|x| > 65504 * 127, gets an infinite d, as in ggml), and s is the
//   f32 d times sum q, rounded to the nearest f16, as ggml's q8_1 stores it (with s from the f16
//   d in f32, a d2048x8 q4_1 model's greedy decode left llama.cpp's tokens at the third step).
enum class ActivationType { F32, BF16, Q8_32, Q8_K };
ActivationType activation_type(DType weight_type);

struct BlockQ8_K {
  float d;
  int8_t qs[kQKBlockSize];
  int16_t bsums[kQKBlockSize / 16];  // the sum of each 16 consecutive qs
};
static_assert(sizeof(BlockQ8_K) == 292, "q8_K block must match ggml's 292-byte layout");

inline constexpr int kQ8_32BlockSize = 32;
struct BlockQ8_32 {
  float d;
  float s;  // the f32 d * (sum of qs), rounded to f16
  int8_t qs[kQ8_32BlockSize];
};

void quantize_row_q8_K(const float* x, BlockQ8_K* y, int64_t n);
void dequantize_row_q8_K(const BlockQ8_K* x, float* y, int64_t n);
void quantize_row_q8_32(const float* x, BlockQ8_32* y, int64_t n);
// q8_32's d as stored: a block's f32 d rounded to the nearest f16.
float q8_32_step(float d);
// q8_32's s as stored (ggml's q8_1 sum): a block's f32 d times the sum of its quants, rounded to
// the nearest f16.
float q8_32_sum(float d, int32_t quant_sum);
void dequantize_row_q8_32(const BlockQ8_32* x, float* y, int64_t n);
// x rounded, in place, to what MUL_MAT multiplies weights of `weight_type` by (activation_type),
// and back to f32; unchanged for F32. n must be whole blocks of the 8-bit types.
void round_activations(DType weight_type, float* x, int64_t n);

}  // namespace tg
