#pragma once
// Vectorised row primitives (ggml's vec.h role): the inner loops every kernel is built from.
// Each instruction set fills one VecKernels table from the same source (vec_impl.h); kernels
// call through the table of the ISA their backend was created with, so one binary runs the best
// code the CPU supports and tests can run the other tables on the same machine.
//
// Conventions: `n` is the element count, outputs come first, in-place use (y == x) is allowed
// wherever an output has the same length as an input. Transcendentals are the EVG's
// (evg/fusion/math.h: exp 1 ulp, tanh ~1.4 ulp, erfc ~1.2e-7 relative), the same bits at every
// ISA.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "tilegraph/core/dtype.h"
#include "tilegraph/core/quant.h"
#include "tilegraph/core/tensor.h"

namespace tg::cpu {

// Ordered: each ISA's CPUs can also run the ones before it.
enum class Isa { SCALAR, AVX2, AVX512 };
inline constexpr int kIsaCount = 3;
std::string_view isa_name(Isa isa);
// The widest ISA that cpu_features() says this machine can run.
Isa best_isa();
// Every ISA this machine can run, narrowest first (tests run each table).
std::vector<Isa> runnable_isas();

enum class BinaryOp { ADD, SUB, MUL, DIV };

struct VecKernels {
  Isa isa;

  void (*f16_to_f32)(int64_t n, float* y, const uint16_t* x);
  void (*f32_to_f16)(int64_t n, uint16_t* y, const float* x);
  void (*bf16_to_f32)(int64_t n, float* y, const uint16_t* x);
  void (*f32_to_bf16)(int64_t n, uint16_t* y, const float* x);
  // Contiguous blocks of a quantized type (is_quantized: q8_0 and quant.h's) to f32; n is a
  // multiple of the block size. The values are the core's dequantize_row_* (bit for bit, but for
  // the sign of a zero).
  void (*dequantize)(DType type, int64_t n, float* y, const void* x);

  void (*binary)(BinaryOp op, int64_t n, float* y, const float* a, const float* b);
  // b applied to every element of a.
  void (*binary_scalar)(BinaryOp op, int64_t n, float* y, const float* a, float b);
  // y = x * s + bias
  void (*scale)(int64_t n, float* y, const float* x, float s, float bias);
  void (*unary)(UnaryOp op, int64_t n, float* y, const float* x);
  // y = act(x) * g
  void (*glu)(GluOp op, int64_t n, float* y, const float* x, const float* g);

  float (*sum)(int64_t n, const float* x);
  // -inf for n == 0.
  float (*max)(int64_t n, const float* x);
  // y = (x - mean) / sqrt(var + eps) and y = x / sqrt(mean(x^2) + eps).
  void (*norm)(int64_t n, float* y, const float* x, float eps);
  void (*rms_norm)(int64_t n, float* y, const float* x, float eps);
  // y = exp(x - shift); returns the sum of y.
  float (*exp_sum)(int64_t n, float* y, const float* x, float shift);

  float (*dot_f32)(int64_t n, const float* a, const float* x);
  // y += s * x
  void (*axpy_f32)(int64_t n, float* y, float s, const float* x);

  // Many rows at once (attention over a block of keys, matrix-vector products): `count` rows of
  // `n` elements of `type` (f32, f16 or bf16), `stride` bytes apart, elements contiguous.
  // out[j] = row_j . x
  void (*dot_rows)(DType type, int64_t n, int64_t count, const void* rows, size_t stride,
                   const float* x, float* out);
  // Rows of q8_0 (n a multiple of 32, blocks contiguous, rows `stride` bytes apart) against
  // `tokens` f32 rows x_t (x_stride floats apart): out[t * out_stride + j] = row_j . x_t. Weights
  // are dequantised in registers to the values `dequantize` gives, and each block is converted
  // once for all the tokens. Every output is summed in an order that depends only on n, so
  // results do not change with how the rows of a matrix are split between calls (threads).
  void (*dot_q8_0_rows)(int64_t n, int64_t count, const void* rows, size_t stride, int64_t tokens,
                        const float* x, int64_t x_stride, float* out, int64_t out_stride);
  // The same for the 4- to 6-bit types against their 8-bit activations (quant.h,
  // activation_type), x_t at x + t * x_stride blocks: q4_K, q5_K and q6_K against q8_K, q4_0,
  // q4_1, q5_0 and q5_1 against q8_32. Exact integer sums of the quants per block, scaled in f32.
  void (*dot_q8k_rows)(DType type, int64_t n, int64_t count, const void* rows, size_t stride,
                       int64_t tokens, const BlockQ8_K* x, int64_t x_stride, float* out,
                       int64_t out_stride);
  void (*dot_q8_32_rows)(DType type, int64_t n, int64_t count, const void* rows, size_t stride,
                         int64_t tokens, const BlockQ8_32* x, int64_t x_stride, float* out,
                         int64_t out_stride);
  // quantize_row_q8_K and quantize_row_q8_32, the same bytes.
  void (*quantize_q8k)(int64_t n, BlockQ8_K* y, const float* x);
  void (*quantize_q8_32)(int64_t n, BlockQ8_32* y, const float* x);
  // y += sum_j s[j] * row_j (rows with s[j] == 0 are skipped).
  void (*axpy_rows)(DType type, int64_t n, int64_t count, const void* rows, size_t stride,
                    const float* s, float* y);

  // Rotary embedding of the first n_dims elements. Adjacent pairs (NORMAL mode):
  // y[2i] = x[2i] cos_i - x[2i+1] sin_i, y[2i+1] = x[2i+1] cos_i + x[2i] sin_i, with the tables
  // given per element as cos_dup = [c0, c0, c1, c1, ...] and sin_signed = [-s0, s0, -s1, s1, ...].
  void (*rope_pairs)(int64_t n_dims, float* y, const float* x, const float* cos_dup,
                     const float* sin_signed);
  // Split halves (NEOX mode): element i pairs with i + n_dims/2; cos/sin have n_dims/2 entries.
  void (*rope_halves)(int64_t n_dims, float* y, const float* x, const float* cos, const float* sin);
};

// The table of `isa`, which the caller must have checked the CPU supports (best_isa()).
const VecKernels& vec_kernels(Isa isa);

// f32 values of all 65536 f16 bit patterns. A quantized block's scale is then a single load,
// which the vector paths fold into a broadcast operand, instead of a conversion and a shuffle each.
const float* f16_to_f32_table();

// Throws tg::Error: `type` reached a kernel of other quantized types, e.g. q8_0 dot_q8k_rows
// (defined outside the ISA regions, so no library code is compiled for an ISA the CPU may lack).
[[noreturn]] void throw_wrong_quant_type(DType type, const char* kernel);

// Defined in vec_<isa>.cpp, each from vec_impl.h.
const VecKernels& scalar_vec_kernels();
const VecKernels& avx2_vec_kernels();
const VecKernels& avx512_vec_kernels();

}  // namespace tg::cpu
