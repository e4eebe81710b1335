#pragma once
// The neural engine's instructions (engine NE): GEMM and convolution on the PE arrays, each
// array doing one 8x16x8 product (M 8, K 16, N 8: 2048 flop) per step, accumulating in f32 (int32
// for int8), then the post-processing the TX8 NE applies on the way out: a per-column bias or
// folded batch norm (scale and shift), an activation, and the conversion or quantisation to the
// output format.
//
// Cost: latency + ceil(steps / arrays / steps-per-cycle of the input format), steps =
// ceil(M/8) ceil(K/16) ceil(N/8); post-processing is pipelined behind the products.
#include <cstdint>
#include <string>

#include "tilegraph/sim/chip.h"
#include "tilegraph/sim/format.h"
#include "tilegraph/sim/memory.h"

namespace tg::sim::ne {

enum class Activation : int32_t { None, Relu, Gelu, Silu, Sigmoid, Tanh };

// y = acc * input_scale; y = y + bias[col] or y * bn_scale[col] + bn_shift[col]; y = act(y);
// out = convert(y) (INT8: saturate(round(y * output_scale))). Vectors are f32 in the tile's SPM.
struct PostProcess {
  float input_scale = 1.0f;  // dequantises an int8 GEMM's int32 accumulator
  uint64_t bias = kNoAddress;
  uint64_t bn_scale = kNoAddress;  // both or neither
  uint64_t bn_shift = kNoAddress;
  Activation act = Activation::None;
  Format out_format = Format::FP32;  // FP32, FP16, BF16, INT8; INT32 for the raw int8 accumulator
  float output_scale = 1.0f;         // INT8 output only
  RoundMode rnd = RoundMode::NearestEven;
};

// dst[M][N] = A[M][K] . B[K][N] (B stored [N][K] when b_transposed: a weight), all row-major in
// SPM. Inputs: FP32, TF32 (rounded to 10 mantissa bits on the way in), FP16, BF16 or INT8.
// accumulate: dst += A.B, dst holding the f32 (int32) partial sums of an earlier K block; only
// with the default PostProcess (raw FP32 / INT32 output).
struct Gemm {
  Format in_format = Format::BF16;
  uint64_t a = 0, b = 0, dst = 0;
  int64_t m = 0, n = 0, k = 0;
  bool b_transposed = false;
  bool accumulate = false;
  PostProcess post;
};

// dst[N][OH][OW][Cout] = conv(input[N][H][W][Cin], weight[KH][KW][Cin][Cout]), dense NHWC,
// OH = (H + 2 pad_h - dil_h (KH - 1) - 1) / stride_h + 1. Costs as the GEMM of its im2col:
// M = N*OH*OW, K = KH*KW*Cin, N = Cout.
struct Conv {
  Format in_format = Format::BF16;
  uint64_t input = 0, weight = 0, dst = 0;
  int64_t n = 1, h = 1, w = 1, cin = 1, cout = 1, kh = 1, kw = 1;
  int32_t stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0, dil_h = 1, dil_w = 1;
  PostProcess post;
};

// The int8 path for q8_0 weights (GGUF's q8_0: per 32 weights one f16 scale and 32 int8), as
// core's MUL_MAT defines a q8_0 product: dst[M][N] = A . B^T with
//   A: f32 activations [M][K], quantised per row and 32-block on the way in (core's q8_32 rule:
//      d = max|x| / 127, q = nearest-even(x / d)), as the NE's input quantiser does;
//   B: the weight [N][K] as stored, N rows of K/32 q8_0 blocks (34 bytes each);
//   dst[m][n] = sum over blocks of (d_a * d_b) * (exact int32 sum of the 32 int8 products),
//   added in f32, then the PostProcess (output FP32, FP16 or BF16).
// K must be a multiple of 32. Costs as the int8 GEMM of the same sizes.
struct GemmQ8_0 {
  uint64_t a = 0, b = 0, dst = 0;
  int64_t m = 0, n = 0, k = 0;
  PostProcess post;
};

uint64_t execute(Tile& tile, const Gemm& instr);
uint64_t execute(Tile& tile, const Conv& instr);
uint64_t execute(Tile& tile, const GemmQ8_0& instr);
std::string instruction_name(const Gemm& instr);      // "NE_Gemm.bf16"
std::string instruction_name(const Conv& instr);      // "NE_Conv.bf16"
std::string instruction_name(const GemmQ8_0& instr);  // "NE_Gemm.q8_0"
// The cost alone (what execute returns), for a compiler's estimates.
uint64_t gemm_cycles(const ChipConfig& config, Format in_format, int64_t m, int64_t n, int64_t k);

}  // namespace tg::sim::ne
