#pragma once
// GEMM and 2-D convolution on the NE, with its post-processing (bias, activation, conversion to
// the output format) applied on the way out. 2-D operands are dense slices of rows x columns:
// shape 1 x 1 x rows x columns (W = rows, C = columns).
//
//   op_gemm:   out [M][N] = act(a [M][K] . b [K][N] + bias[N])  (b [N][K] when b_transposed, a
//              weight as stored); a and b fp32, tf32, fp16, bf16 or int8 (same format); out fp32,
//              fp16, bf16 (or int32 / int8 for int8 inputs); accumulate adds to an fp32 out (a
//              K split over several calls), without post-processing.
//   op_conv2d: out [N][OH][OW][Cout] = act(conv(in [N][H][W][Cin], weight) + bias), weight dense
//              KH x KW x Cin x Cout.
#include <cstdint>

#include "tilegraph/sim/chip.h"
#include "tilegraph/sim/ne.h"
#include "tilegraph/sim/oplib/op_cost.h"
#include "tilegraph/sim/oplib/tensor_desc.h"

namespace tg::sim::oplib {

struct GemmParam {
  bool b_transposed = false;
  bool accumulate = false;
  ne::Activation act = ne::Activation::None;
};

// bias: an fp32 vector of N (or null). Returns the NE instruction's cycles; no imm.
uint64_t op_gemm(Tile& tile, const GemmParam& param, const Tsr& a, const Tsr& b, const Tsr* bias, const Tsr& out);
OpCost gemm_cost(const ChipConfig& config, Format in_format, int64_t m, int64_t n, int64_t k);

// out [M][N] = act(a [M][K] . w^T + bias) for a q8_0 weight on the NE's int8 path (ne::GemmQ8_0:
// the activations quantised per row and 32-block on the way in, the weight's f16 block scales
// applied per block). a: fp32 [M][K]; w: the weight's rows as stored in GGUF, N rows of K/32
// q8_0 blocks of 34 bytes, described as an int8 matrix 1 x 1 x N x (K/32 * 34); out fp32, fp16
// or bf16. K is a multiple of 32. param.b_transposed must be true (a weight is stored as rows of
// K) and param.accumulate false.
uint64_t op_gemm_q8_0(Tile& tile, const GemmParam& param, const Tsr& a, const Tsr& w, const Tsr* bias, const Tsr& out);
OpCost gemm_q8_0_cost(const ChipConfig& config, int64_t m, int64_t n, int64_t k);

struct Conv2dParam {
  int32_t stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0, dil_h = 1, dil_w = 1;
  ne::Activation act = ne::Activation::None;
};

uint64_t op_conv2d(Tile& tile, const Conv2dParam& param, const Tsr& in, const Tsr& weight, const Tsr* bias,
                   const Tsr& out);
// The output shape of a convolution of `in` by a KH x KW x Cin x Cout weight.
Shape4 conv2d_out_shape(const Conv2dParam& param, const Shape4& in, const Shape4& weight);
OpCost conv2d_cost(const ChipConfig& config, const Conv2dParam& param, Format in_format, const Shape4& in,
                   const Shape4& weight);

}  // namespace tg::sim::oplib
