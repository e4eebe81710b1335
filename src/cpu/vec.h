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

// Ordered: each ISA's CPUs can also run the ones before it. AVX512_VNNI is the AVX-512 table but
// for the integer GEMM's micro-tile (vpdpbusd); AVX512_BF16 is the AVX512_VNNI table with a GEMM
// that multiplies bf16 by bf16 in pairs (vdpbf16ps; every CPU with it has VNNI too); AMX is the
// AVX512_BF16 table with an integer GEMM tile on AMX-INT8's tile registers (Sapphire Rapids and
// later, once Linux has granted the process the tile state: cpu_features()).
enum class Isa { SCALAR, AVX2, AVX512, AVX512_VNNI, AVX512_BF16, AMX };
inline constexpr int kIsaCount = 6;
std::string_view isa_name(Isa isa);
// The widest ISA that cpu_features() says this machine can run.
Isa best_isa();
// Every ISA this machine can run, narrowest first (tests run each table).
std::vector<Isa> runnable_isas();

enum class BinaryOp { ADD, SUB, MUL, DIV };

// Operands of the integer GEMM of quantized weights (pack_quant_panel, pack_quant_activations,
// quant_gemm_tiles), block by block. A weight row's block: its quants as bytes, an int16 scale
// per 16 elements inside the integer sums (K types), one f32 step d, and an f32 offset per
// `group` elements (the part of each weight that does not depend on its quant: -8d, m, -dmin
// m_s, -32 d sc_s, ...). A token's block: its 8-bit quants (quant.h's rule), their f32 scale,
// and d times the sum of the quants of each group. Then a weight of block b, group g, element i
// is d_b (scale_i q_i) + offset_g and an activation is dx_b qx_i. q8_0's quants are signed and
// have no offset; its tokens' group sums are the int32 sums of their quants, which a tile that
// can only multiply unsigned weights (vpdpbusd) takes back after multiplying q + 128.
struct QuantGemmLayout {
  int block;           // elements per block, of the weights and of the activations: 256 or 32
  int group;           // elements per offset: 16 or 32
  bool int_scales;     // an int16 scale per 16 elements (K types), else 1
  bool signed_quants;  // q8_0: int8 quants, no offsets, int32 group sums
  int max_quant;       // the largest unsigned quant (q4 15, q5 31, q6 63); q8_0: 128 (|q|)

  // 4-element steps whose maddubs pairs (2 products each, |x| <= 127) can be added in int16
  // before they are widened and scaled: a tile multiplies fewer times.
  constexpr int int16_steps() const {
    const int fit = 32767 / (2 * 127 * max_quant);
    return fit < 4 ? (fit < 1 ? 1 : fit) : 4;
  }

  // One block of a panel of `rows` weight rows: quants [block / 4][rows][4] bytes, then scales
  // int32 [block / 16][rows] (the int16 scale in both halves; K types only), steps d f32 [rows]
  // and offsets f32 [block / group][rows] (none for signed quants); the byte offsets of each
  // part, and the whole.
  constexpr size_t scales_at(int rows) const { return size_t(block) * size_t(rows); }
  constexpr size_t steps_at(int rows) const {
    return scales_at(rows) + (int_scales ? size_t(block / 16) * 4 * size_t(rows) : 0);
  }
  constexpr size_t offsets_at(int rows) const { return steps_at(rows) + 4 * size_t(rows); }
  constexpr size_t weight_block_bytes(int rows) const {
    return offsets_at(rows) + (signed_quants ? 0 : size_t(block / group) * 4 * size_t(rows));
  }
  // One block of a token: quants [block] int8, then dx f32 at dx_at and sums [block / group].
  constexpr size_t dx_at() const { return size_t(block); }
  constexpr size_t sums_at() const { return dx_at() + 4; }
  constexpr size_t activation_block_bytes() const { return sums_at() + size_t(block / group) * 4; }
};
// q4_K and q5_K: an offset per 32 elements, the granularity of their mins (one product fewer per
// 32 elements than q6_K's per 16).
inline constexpr QuantGemmLayout kQuantGemmK{256, 32, true, false, 31};    // q4_K, q5_K
inline constexpr QuantGemmLayout kQuantGemmQ6K{256, 16, true, false, 63};  // q6_K
inline constexpr QuantGemmLayout kQuantGemm32{32, 32, false, false, 31};   // q4_0, q4_1, q5_0, q5_1
inline constexpr QuantGemmLayout kQuantGemm8{32, 32, false, true, 128};    // q8_0
// The most tokens a table's quant_gemm_tiles takes at once.
inline constexpr int kMaxQuantTileTokens = 16;
// The layout of `type`; throws for the types that do not take 8-bit activations.
QuantGemmLayout quant_gemm_layout(DType type);

// The most rows of a matrix that dot_q8k_rows and dot_q8_32_rows read at once.
inline constexpr int kMaxMatVecRowStreams = 4;
// The rows at once that suit this CPU, from its vendor and family (cpu_features): several streams
// per core, each prefetched in software, cover the DRAM latency of an Intel core and feed a Zen
// 5; Zen 4's prefetchers serve fewer streams better.
int matvec_row_streams();
// Whether one-token decode on this CPU reads interleaved copies of the quantized matrices
// (prepared_weights.h) rather than their stored rows: where the copy's 16-row kernel is faster.
// Zen 4: 1.1-1.5x the tokens/s of the rows; Sapphire Rapids: 0.7-0.8x (the copy's kernel
// compute-bound at 12.7 GB/s of q4_0 on one core from L3 and DRAM alike, likely its 512-bit
// unpacking and vpdpbusd sharing two ports, against the rows' 17, the read bound).
bool decodes_interleaved_copies();

// The scratch of dot_q8_32_rows (VecKernels): room for what every ISA lays out per activation block.
inline constexpr size_t kDotQ8_32ScratchBytesPerBlock = 16;
inline size_t dot_q8_32_scratch_bytes(int64_t n, int64_t tokens) {
  return size_t(n / kQ8_32BlockSize) * size_t(tokens) * kDotQ8_32ScratchBytesPerBlock;
}

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
  void (*dot_rows)(DType type, int64_t n, int64_t count, const void* rows, size_t stride, const float* x, float* out);
  // Rows of a quantized type (n a multiple of its block, blocks contiguous, rows `stride` bytes
  // apart) against `tokens` rows of 8-bit activations (quant.h, activation_type), x_t at x + t *
  // x_stride blocks: out[t * out_stride + j] = row_j . x_t. q4_K, q5_K and q6_K against q8_K;
  // q8_0, q4_0, q4_1, q5_0 and q5_1 against q8_32. Exact integer sums of the quants per block,
  // scaled in f32; each block is unpacked once for all the tokens. Every output is summed in an
  // order that depends only on n, so results do not change with how the rows of a matrix are
  // split between calls (threads).
  // row_streams (1 to kMaxMatVecRowStreams; matvec_row_streams() suits this CPU): how many rows
  // a tile reads at once, each from its own run of the matrix; the results do not depend on it.
  // dot_q8_32_rows also takes `scratch`: dot_q8_32_scratch_bytes(n, tokens), 64-byte aligned,
  // where it lays out what q4_0 and q5_0 take from each token's blocks once for all the rows.
  void (*dot_q8k_rows)(DType type, int64_t n, int64_t count, const void* rows, size_t stride, int64_t tokens,
                       const BlockQ8_K* x, int64_t x_stride, float* out, int64_t out_stride, int row_streams);
  void (*dot_q8_32_rows)(DType type, int64_t n, int64_t count, const void* rows, size_t stride, int64_t tokens,
                         const BlockQ8_32* x, int64_t x_stride, float* out, int64_t out_stride, int row_streams,
                         void* scratch);
  // interleave_rows' groups (interleaved_rows.h: every quantized type) of `rows` rows of n elements
  // against one token of 8-bit activations (q8_32 blocks; q8_K for the K types): out[j] = row_j . x for
  // j < rows. Each row's block is its exact integer sum, scaled in f32 and added in block order:
  // the same bits on every table (not the bits of dot_q8_32_rows and dot_q8k_rows, which keep
  // several lanes per block). scratch: dot_q8_32_scratch_bytes(n, 1).
  void (*dot_interleaved_rows)(DType type, int64_t n, int64_t rows, const uint8_t* groups, const void* x, float* out,
                               void* scratch);
  // quantize_row_q8_K and quantize_row_q8_32, the same bytes.
  void (*quantize_q8k)(int64_t n, BlockQ8_K* y, const float* x);
  void (*quantize_q8_32)(int64_t n, BlockQ8_32* y, const float* x);
  // The integer GEMM of the quantized types (prefill: more than a few tokens), as
  // QuantGemmLayout describes. pack_quant_panel unpacks `rows` <= quant_panel_rows rows of n
  // elements (blocks contiguous, rows `stride` bytes apart) into one panel of quant_panel_rows
  // rows, the rows past `rows` zero, and requests the rows' next n elements into cache (the GEMM
  // packs K blocks in order). pack_quant_activations quantizes one token's n values.
  // quant_gemm_tiles: c[t * ldc + j] (+)= row_j . x_t for j < rows and t < tokens <=
  // quant_tile_tokens, from the panels of n elements packed with `layout`, one per
  // quant_panel_rows rows, `panel_stride` bytes apart, and the tokens' blocks at x + t * x_stride:
  // exact integer sums per block, scaled in f32, in an order that depends only on n. A row of
  // tiles per call, so that a table whose tiles need set-up (AMX's configuration) pays for it
  // once per row; one stride for the tokens, since AMX loads them as the rows of one tile.
  int quant_panel_rows;
  int quant_tile_tokens;
  void (*pack_quant_panel)(DType type, int64_t n, int rows, const void* first_row, size_t stride, uint8_t* panel);
  void (*pack_quant_activations)(DType weight_type, int64_t n, const float* x, uint8_t* out);
  void (*quant_gemm_tiles)(QuantGemmLayout layout, int64_t n, const uint8_t* panels, size_t panel_stride, int rows,
                           int tokens, const uint8_t* x, size_t x_stride, float* c, int64_t ldc, bool accumulate);
  // y += sum_j s[j] * row_j (rows with s[j] == 0 are skipped).
  void (*axpy_rows)(DType type, int64_t n, int64_t count, const void* rows, size_t stride, const float* s, float* y);

  // Rotary embedding of the first n_dims elements. Adjacent pairs (NORMAL mode):
  // y[2i] = x[2i] cos_i - x[2i+1] sin_i, y[2i+1] = x[2i+1] cos_i + x[2i] sin_i, with the tables
  // given per element as cos_dup = [c0, c0, c1, c1, ...] and sin_signed = [-s0, s0, -s1, s1, ...].
  void (*rope_pairs)(int64_t n_dims, float* y, const float* x, const float* cos_dup, const float* sin_signed);
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
const VecKernels& avx512_vnni_vec_kernels();
const VecKernels& avx512_bf16_vec_kernels();
const VecKernels& amx_vec_kernels();

}  // namespace tg::cpu
