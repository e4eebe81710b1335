#pragma once
// Op builders. Each returns a new tensor in `ctx` whose op, sources and parameters describe the
// computation; nothing is computed until a backend runs the graph. Shapes and dtypes are checked
// here and violations throw tg::Error naming the op and the shapes. The semantics written beside
// each builder are what core/reference.cpp implements and every backend must match.
//
// Conventions (as in ggml): dimension 0 is innermost; "rows" are the ne[0]-long vectors; float ops
// accept f32/f16/bf16 and compute in f32; results of float ops keep the type of `a` unless noted.
#include <cstdint>

#include "tilegraph/core/context.h"
#include "tilegraph/core/tensor.h"

namespace tg {

// a [K, M, A2, A3] (f32/f16/bf16 or quantized), b [K, N, B2, B3] (f32/f16/bf16), B2 % A2 == 0 and
// B3 % A3 == 0 (a is broadcast over b's batch dims) -> f32 [M, N, B2, B3];
// r[m,n,i2,i3] = sum_k a[k,m,i2/(B2/A2),i3/(B3/A3)] * b[k,n,i2,i3]; with quantized a, b's rows
// rounded to 8 bits first (quant.h, round_activations), as in ggml.
Tensor* mul_mat(Context& ctx, Tensor* a, Tensor* b);

// Elementwise with b broadcast to a (a.ne[i] % b.ne[i] == 0): result has a's shape and type.
Tensor* add(Context& ctx, Tensor* a, Tensor* b);
Tensor* sub(Context& ctx, Tensor* a, Tensor* b);
Tensor* mul(Context& ctx, Tensor* a, Tensor* b);
Tensor* div(Context& ctx, Tensor* a, Tensor* b);

// a * s + bias. op_params: [0] s (f32 bits), [1] bias.
Tensor* scale(Context& ctx, Tensor* a, float s, float bias = 0.0f);

// op_params: [0] UnaryOp. gelu is the tanh approximation, gelu_erf the exact form.
Tensor* unary(Context& ctx, Tensor* a, UnaryOp op);
inline Tensor* relu(Context& c, Tensor* a) { return unary(c, a, UnaryOp::RELU); }
inline Tensor* gelu(Context& c, Tensor* a) { return unary(c, a, UnaryOp::GELU); }
inline Tensor* gelu_erf(Context& c, Tensor* a) { return unary(c, a, UnaryOp::GELU_ERF); }
inline Tensor* silu(Context& c, Tensor* a) { return unary(c, a, UnaryOp::SILU); }
inline Tensor* sigmoid(Context& c, Tensor* a) { return unary(c, a, UnaryOp::SIGMOID); }
inline Tensor* tanh(Context& c, Tensor* a) { return unary(c, a, UnaryOp::TANH); }
inline Tensor* exp(Context& c, Tensor* a) { return unary(c, a, UnaryOp::EXP); }
inline Tensor* neg(Context& c, Tensor* a) { return unary(c, a, UnaryOp::NEG); }
inline Tensor* abs(Context& c, Tensor* a) { return unary(c, a, UnaryOp::ABS); }
inline Tensor* sqrt(Context& c, Tensor* a) { return unary(c, a, UnaryOp::SQRT); }
inline Tensor* rsqrt(Context& c, Tensor* a) { return unary(c, a, UnaryOp::RSQRT); }

// Gated linear unit, r = act(x) * g, act = silu (SWIGLU) or gelu-tanh (GEGLU).
// glu(a): a.ne[0] even; x = first half of each row, g = second half (swapped: the other way
// round); result [a.ne0/2, ...]. glu_split(a, b): x = a, g = b, same shapes. op_params: [0] GluOp,
// [1] swapped.
Tensor* glu(Context& ctx, Tensor* a, GluOp op, bool swapped = false);
Tensor* glu_split(Context& ctx, Tensor* a, Tensor* b, GluOp op);
inline Tensor* swiglu(Context& c, Tensor* a, Tensor* b) { return glu_split(c, a, b, GluOp::SWIGLU); }

// Per row: (x - mean) / sqrt(var + eps). op_params: [0] eps.
Tensor* norm(Context& ctx, Tensor* a, float eps);
// Per row: x / sqrt(mean(x^2) + eps). op_params: [0] eps.
Tensor* rms_norm(Context& ctx, Tensor* a, float eps);

// Per row: softmax(a * scale + slope * mask). mask (optional, f32/f16): mask.ne0 == a.ne0,
// mask.ne1 >= a.ne1, a.ne2 % mask.ne2 == 0, a.ne3 % mask.ne3 == 0; row i1 of a uses row i1 of the
// mask. slope = 1 unless max_bias > 0 (ALiBi, head = i2, as ggml). op_params: [0] scale,
// [1] max_bias.
Tensor* soft_max(Context& ctx, Tensor* a, Tensor* mask = nullptr, float scale = 1.0f, float max_bias = 0.0f);

struct RopeParams {
  int32_t n_dims = 0;                // rotated dims (even, <= ne0); the rest are copied
  RopeMode mode = RopeMode::NORMAL;  // NORMAL rotates (x[2i], x[2i+1]); NEOX (x[i], x[i+n/2])
  int32_t n_ctx_orig = 0;
  float freq_base = 10000.0f;
  float freq_scale = 1.0f;
  float ext_factor = 0.0f;  // YaRN extrapolation mix; 0 disables
  float attn_factor = 1.0f;
  float beta_fast = 32.0f;
  float beta_slow = 1.0f;
};
// a [head_dim, n_head, n_tokens, 1] (f32/f16), pos i32 [n_tokens], freq_factors (optional f32
// [n_dims/2]) divide the per-pair frequencies. ggml's rope_ext semantics, op_params layout:
// [1] n_dims [2] mode [4] n_ctx_orig [5] freq_base [6] freq_scale [7] ext_factor [8] attn_factor
// [9] beta_fast [10] beta_slow.
Tensor* rope(Context& ctx, Tensor* a, Tensor* pos, const RopeParams& params, Tensor* freq_factors = nullptr);

// a [ne0, R, A2, A3] (any type), idx i32 [n, A2, A3] -> [ne0, n, A2, A3] (f32, or i32 for i32
// a): r[:, i, j, k] = a[:, idx[i, j, k], j, k]. Indices outside [0, R) are a compute-time error.
Tensor* get_rows(Context& ctx, Tensor* a, Tensor* idx);
// dst [ne0, R, D2, D3] (f32/f16/bf16 or quantized), src f32 [ne0, n, D2, D3], idx i32 [n, I1, I2] with
// D2 % I1 == 0 and D3 % I2 == 0: dst[:, idx[i, j % I1, k % I2], j, k] = src[:, i, j, k].
// Returns a view of dst that carries the write (use it, not dst, as the graph output).
Tensor* set_rows(Context& ctx, Tensor* dst, Tensor* src, Tensor* idx);

// Copies a into b (same element count, any layouts) converting the type, in logical
// (row-major over ne) order. Returns a view of b that carries the write.
Tensor* cpy(Context& ctx, Tensor* a, Tensor* b);
// A contiguous copy of a (same type and shape).
Tensor* cont(Context& ctx, Tensor* a);

// Views alias a's memory. offset is in bytes; nb1..nb3 are byte strides.
Tensor* view_1d(Context& ctx, Tensor* a, int64_t ne0, size_t offset);
Tensor* view_2d(Context& ctx, Tensor* a, int64_t ne0, int64_t ne1, size_t nb1, size_t offset);
Tensor* view_3d(Context& ctx, Tensor* a, int64_t ne0, int64_t ne1, int64_t ne2, size_t nb1, size_t nb2, size_t offset);
Tensor* view_4d(Context& ctx, Tensor* a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3, size_t nb1, size_t nb2,
                size_t nb3, size_t offset);
// a must be contiguous; the element count must not change.
Tensor* reshape(Context& ctx, Tensor* a, std::initializer_list<int64_t> ne);
// Axis i of a becomes axis ax[i] of the result (ggml_permute); ax is a permutation of 0..3.
Tensor* permute(Context& ctx, Tensor* a, int ax0, int ax1, int ax2, int ax3);
Tensor* transpose(Context& ctx, Tensor* a);  // swaps dims 0 and 1

// q [D, n_q, H, B] (f32), k [D, n_kv, Hkv, B] and v [Dv, n_kv, Hkv, B] (f32/f16/bf16),
// H % Hkv == 0 (grouped-query attention), mask (optional f32/f16) [n_kv, >= n_q, 1|H, 1|B].
// -> f32 [Dv, H, n_q, B] (note: heads before queries, as ggml). Per query row:
// s = (q.k) * scale; s = softcap * tanh(s / softcap) if softcap > 0; s += slope * mask;
// r = softmax(s) . v. op_params: [0] scale [1] max_bias [2] softcap.
Tensor* flash_attn_ext(Context& ctx, Tensor* q, Tensor* k, Tensor* v, Tensor* mask, float scale, float max_bias = 0.0f,
                       float softcap = 0.0f);

// f32 [ne0, ...] -> f32 [1, ne1, ne2, ne3], the sum of each row.
Tensor* sum_rows(Context& ctx, Tensor* a);
// f32 [ne0, ne1] -> i32 [ne1]: index of the first maximum of each row, NaNs skipped (0 for a
// row of NaNs only).
Tensor* argmax(Context& ctx, Tensor* a);

// Inference batch norm over channel axis `axis` (default 2, i.e. [W, H, C, N] images):
// y = (x - mean[c]) / sqrt(var[c] + eps) * gamma[c] + beta[c]. mean/var/gamma/beta: f32 [C];
// gamma and beta optional (1 and 0). op_params: [0] eps [1] axis.
Tensor* batch_norm(Context& ctx, Tensor* x, Tensor* mean, Tensor* var, Tensor* gamma, Tensor* beta, float eps,
                   int axis = 2);

struct Conv2dParams {
  int32_t s0 = 1, s1 = 1;  // stride along W, H
  int32_t p0 = 0, p1 = 0;  // zero padding along W, H
  int32_t d0 = 1, d1 = 1;  // dilation along W, H
};
// kernel [KW, KH, Cin, Cout] (f32/f16), input [W, H, Cin, N] (f32) -> f32 [OW, OH, Cout, N],
// OW = (W + 2 p0 - d0 (KW - 1) - 1) / s0 + 1 (likewise OH). op_params: [0..5] s0 s1 p0 p1 d0 d1.
Tensor* conv_2d(Context& ctx, Tensor* kernel, Tensor* input, const Conv2dParams& params = {});

struct Pool2dParams {
  PoolOp op = PoolOp::MAX;
  int32_t k0 = 2, k1 = 2;  // window along W, H
  int32_t s0 = 2, s1 = 2;
  int32_t p0 = 0, p1 = 0;
};
// a [W, H, C, N] (f32) -> f32 [OW, OH, C, N], OW = (W + 2 p0 - k0) / s0 + 1. MAX ignores padding;
// AVG divides by k0 * k1 (padding counts as zeros, as ggml and PyTorch's default).
// op_params: [0] op [1] k0 [2] k1 [3] s0 [4] s1 [5] p0 [6] p1.
Tensor* pool_2d(Context& ctx, Tensor* a, const Pool2dParams& params);

// Same type, same shape except along `dim`; result stacks a then b. op_params: [0] dim.
Tensor* concat(Context& ctx, Tensor* a, Tensor* b, int dim);

}  // namespace tg
