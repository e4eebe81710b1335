#include "tilegraph/core/ops.h"

#include <algorithm>
#include <string>
#include <type_traits>

#include "tilegraph/core/error.h"

namespace tg {

namespace {

[[noreturn]] void fail(std::string_view op, const std::string& message, std::initializer_list<const Tensor*> operands) {
  std::string text = std::string(op) + ": " + message;
  const char* separator = " (";
  for (const Tensor* t : operands) {
    if (!t) continue;
    text += separator + describe(*t);
    separator = "; ";
  }
  if (separator[0] == ';') text += ')';
  throw Error(text);
}

// Builders run for every tensor of every decode step: a message that needs formatting is passed
// as a function, so it is only built when the check fails.
void require(bool ok, std::string_view op, std::string_view message, std::initializer_list<const Tensor*> operands) {
  if (!ok) fail(op, std::string(message), operands);
}
template <class Message>
  requires std::is_invocable_r_v<std::string, Message>
void require(bool ok, std::string_view op, Message&& message, std::initializer_list<const Tensor*> operands) {
  if (!ok) fail(op, message(), operands);
}

void require_operand(const Tensor* t, std::string_view op, std::string_view role) {
  if (!t) throw Error(std::string(op) + ": " + std::string(role) + " is null");
}

bool is_float(DType type) { return dtype_traits(type).is_float; }

void require_float(const Tensor* t, std::string_view op, std::string_view role) {
  require(is_float(t->type), op,
          [&] { return std::string(role) + " must be f32, f16 or bf16, not " + std::string(dtype_name(t->type)); },
          {t});
}

void require_type(const Tensor* t, DType type, std::string_view op, std::string_view role) {
  require(t->type == type, op,
          [&] {
            return std::string(role) + " must be " + std::string(dtype_name(type)) + ", not " +
                   std::string(dtype_name(t->type));
          },
          {t});
}

std::string dim_mismatch(std::string_view lhs, int64_t l, std::string_view rhs, int64_t r) {
  return std::string(lhs) + "=" + std::to_string(l) + " vs " + std::string(rhs) + "=" + std::to_string(r);
}

Tensor* new_result(Context& ctx, DType type, const int64_t (&ne)[kMaxDims], Op op,
                   std::initializer_list<Tensor*> srcs) {
  Tensor* t = ctx.new_tensor(type, std::span<const int64_t>(ne, kMaxDims));
  t->op = op;
  int i = 0;
  for (Tensor* s : srcs) t->src[i++] = s;
  return t;
}

Tensor* new_like(Context& ctx, const Tensor* a, Op op, std::initializer_list<Tensor*> srcs) {
  return new_result(ctx, a->type, {a->ne[0], a->ne[1], a->ne[2], a->ne[3]}, op, srcs);
}

// A view over `base` that also records the op producing it (views and in-place writes).
Tensor* new_view_node(Context& ctx, Tensor* base, Op op, const int64_t (&ne)[kMaxDims], const size_t (&nb)[kMaxDims],
                      size_t offset, std::string_view what) {
  Tensor view;
  std::copy_n(ne, kMaxDims, view.ne);
  std::copy_n(nb, kMaxDims, view.nb);
  view.type = base->type;
  const Tensor* storage = base->view_src ? base->view_src : base;
  const size_t absolute = offset + (base->view_src ? base->view_offs : 0);
  for (int i = 0; i < kMaxDims; ++i) {
    require(ne[i] >= 0, what, [&] { return "negative size in dimension " + std::to_string(i); }, {base});
  }
  const DTypeTraits& traits = dtype_traits(base->type);
  if (traits.block_size > 1) {
    // Rows of whole blocks, starting on a block: anything else splits a block's scale from its
    // quants.
    require(ne[0] % int64_t(traits.block_size) == 0 && absolute % traits.type_size == 0, what,
            [&] {
              return "a " + std::string(traits.name) + " view needs ne[0] a multiple of " +
                     std::to_string(traits.block_size) + " and an offset of whole blocks";
            },
            {base});
  }
  // The view's extent (Tensor::nbytes) with every product and sum checked, so that an offset or
  // a stride near SIZE_MAX cannot wrap around to a small view.
  const size_t storage_bytes = storage->nbytes();
  size_t extent = 0;
  bool wraps = false;
  if (!view.is_empty()) {
    size_t term;
    if (traits.block_size == 1) {
      wraps = __builtin_mul_overflow(size_t(ne[0] - 1), nb[0], &term) ||
              __builtin_add_overflow(term, traits.type_size, &extent);
    } else {
      wraps = __builtin_mul_overflow(size_t(ne[0]) / traits.block_size, nb[0], &extent);
    }
    for (int i = 1; i < kMaxDims; ++i) {
      wraps = wraps || __builtin_mul_overflow(size_t(ne[i] - 1), nb[i], &term) ||
              __builtin_add_overflow(extent, term, &extent);
    }
  }
  const bool fits = !wraps && absolute <= storage_bytes && extent <= storage_bytes - absolute;
  require(fits, what,
          [&] {
            return "view at offset " + std::to_string(absolute) + " with ne=" + shape_string(ne) + " nb=[" +
                   std::to_string(nb[0]) + "," + std::to_string(nb[1]) + "," + std::to_string(nb[2]) + "," +
                   std::to_string(nb[3]) + "] exceeds the " + std::to_string(storage_bytes) + " bytes of its base";
          },
          {base});
  Tensor* t = ctx.new_view(base, base->type, std::span<const int64_t>(ne, kMaxDims),
                           std::span<const size_t>(nb, kMaxDims), offset);
  t->op = op;
  t->src[0] = base;
  return t;
}

Tensor* binary(Context& ctx, Op op, Tensor* a, Tensor* b) {
  const std::string_view name = op_name(op);
  require_operand(a, name, "a");
  require_operand(b, name, "b");
  require_float(a, name, "a");
  require_float(b, name, "b");
  require(can_repeat(*b, *a), name, "b cannot be broadcast to a's shape", {a, b});
  return new_like(ctx, a, op, {a, b});
}

int64_t conv_out_size(int64_t in, int64_t kernel, int32_t stride, int32_t pad, int32_t dilation) {
  return (in + 2 * int64_t(pad) - int64_t(dilation) * (kernel - 1) - 1) / stride + 1;
}

}  // namespace

Tensor* mul_mat(Context& ctx, Tensor* a, Tensor* b) {
  require_operand(a, "mul_mat", "a");
  require_operand(b, "mul_mat", "b");
  require(is_float(a->type) || is_quantized(a->type), "mul_mat", "a must be f32, f16, bf16 or a quantized type", {a});
  require_float(b, "mul_mat", "b");
  require(a->ne[0] == b->ne[0], "mul_mat", [&] { return dim_mismatch("a.ne[0]", a->ne[0], "b.ne[0]", b->ne[0]); },
          {a, b});
  require(a->ne[2] > 0 && a->ne[3] > 0 && b->ne[2] % a->ne[2] == 0 && b->ne[3] % a->ne[3] == 0, "mul_mat",
          "b's batch dims must be multiples of a's", {a, b});
  return new_result(ctx, DType::F32, {a->ne[1], b->ne[1], b->ne[2], b->ne[3]}, Op::MUL_MAT, {a, b});
}

Tensor* add(Context& ctx, Tensor* a, Tensor* b) { return binary(ctx, Op::ADD, a, b); }
Tensor* sub(Context& ctx, Tensor* a, Tensor* b) { return binary(ctx, Op::SUB, a, b); }
Tensor* mul(Context& ctx, Tensor* a, Tensor* b) { return binary(ctx, Op::MUL, a, b); }
Tensor* div(Context& ctx, Tensor* a, Tensor* b) { return binary(ctx, Op::DIV, a, b); }

Tensor* scale(Context& ctx, Tensor* a, float s, float bias) {
  require_operand(a, "scale", "a");
  require_float(a, "scale", "a");
  Tensor* t = new_like(ctx, a, Op::SCALE, {a});
  t->set_param_f32(0, s);
  t->set_param_f32(1, bias);
  return t;
}

Tensor* unary(Context& ctx, Tensor* a, UnaryOp op) {
  require_operand(a, "unary", "a");
  require_float(a, "unary", "a");
  require(int(op) >= 0 && int(op) < kUnaryOpCount, "unary",
          [&] { return "unknown unary op " + std::to_string(int(op)); }, {a});
  Tensor* t = new_like(ctx, a, Op::UNARY, {a});
  t->op_params[0] = int32_t(op);
  return t;
}

Tensor* glu(Context& ctx, Tensor* a, GluOp op, bool swapped) {
  require_operand(a, "glu", "a");
  require_float(a, "glu", "a");
  require(int(op) >= 0 && int(op) < kGluOpCount, "glu", "unknown glu op", {a});
  require(a->ne[0] % 2 == 0, "glu", "a.ne[0] must be even to split into value and gate", {a});
  Tensor* t = new_result(ctx, a->type, {a->ne[0] / 2, a->ne[1], a->ne[2], a->ne[3]}, Op::GLU, {a});
  t->op_params[0] = int32_t(op);
  t->op_params[1] = swapped ? 1 : 0;
  return t;
}

Tensor* glu_split(Context& ctx, Tensor* a, Tensor* b, GluOp op) {
  require_operand(a, "glu", "a");
  require_operand(b, "glu", "b");
  require_float(a, "glu", "a");
  require_float(b, "glu", "b");
  require(int(op) >= 0 && int(op) < kGluOpCount, "glu", "unknown glu op", {a});
  require(same_shape(*a, *b), "glu", "a and b must have the same shape", {a, b});
  Tensor* t = new_like(ctx, a, Op::GLU, {a, b});
  t->op_params[0] = int32_t(op);
  return t;
}

Tensor* norm(Context& ctx, Tensor* a, float eps) {
  require_operand(a, "norm", "a");
  require_float(a, "norm", "a");
  require(eps >= 0.0f, "norm", "eps must be >= 0", {a});
  Tensor* t = new_like(ctx, a, Op::NORM, {a});
  t->set_param_f32(0, eps);
  return t;
}

Tensor* rms_norm(Context& ctx, Tensor* a, float eps) {
  require_operand(a, "rms_norm", "a");
  require_float(a, "rms_norm", "a");
  require(eps >= 0.0f, "rms_norm", "eps must be >= 0", {a});
  Tensor* t = new_like(ctx, a, Op::RMS_NORM, {a});
  t->set_param_f32(0, eps);
  return t;
}

Tensor* soft_max(Context& ctx, Tensor* a, Tensor* mask, float scale, float max_bias) {
  require_operand(a, "soft_max", "a");
  require_float(a, "soft_max", "a");
  require(max_bias >= 0.0f, "soft_max", "max_bias must be >= 0", {a});
  if (mask) {
    require(mask->type == DType::F32 || mask->type == DType::F16, "soft_max", "mask must be f32 or f16", {mask});
    require(mask->ne[0] == a->ne[0], "soft_max",
            [&] { return dim_mismatch("mask.ne[0]", mask->ne[0], "a.ne[0]", a->ne[0]); }, {a, mask});
    require(mask->ne[1] >= a->ne[1], "soft_max", "mask needs at least a.ne[1] rows", {a, mask});
    require(mask->ne[2] > 0 && mask->ne[3] > 0 && a->ne[2] % mask->ne[2] == 0 && a->ne[3] % mask->ne[3] == 0,
            "soft_max", "mask cannot be broadcast over a's dims 2 and 3", {a, mask});
  }
  Tensor* t = new_like(ctx, a, Op::SOFT_MAX, {a, mask});
  t->set_param_f32(0, scale);
  t->set_param_f32(1, max_bias);
  return t;
}

Tensor* rope(Context& ctx, Tensor* a, Tensor* pos, const RopeParams& p, Tensor* freq_factors) {
  require_operand(a, "rope", "a");
  require_operand(pos, "rope", "pos");
  require(a->type == DType::F32 || a->type == DType::F16, "rope", "a must be f32 or f16", {a});
  require_type(pos, DType::I32, "rope", "pos");
  require(p.n_dims > 0 && p.n_dims % 2 == 0 && p.n_dims <= a->ne[0], "rope",
          [&] { return "n_dims=" + std::to_string(p.n_dims) + " must be even, positive and <= a.ne[0]"; }, {a});
  require(p.mode == RopeMode::NORMAL || p.mode == RopeMode::NEOX, "rope", "mode must be NORMAL (0) or NEOX (2)", {a});
  require(pos->ne[0] == a->ne[2] && pos->nelements() == pos->ne[0], "rope",
          "pos must be 1-D with one position per token (a.ne[2])", {a, pos});
  require(p.freq_base > 0.0f && p.freq_scale > 0.0f, "rope", "freq_base and freq_scale must be > 0", {a});
  if (freq_factors) {
    require_type(freq_factors, DType::F32, "rope", "freq_factors");
    require(freq_factors->ne[0] >= p.n_dims / 2, "rope", "freq_factors needs n_dims/2 entries", {freq_factors});
  }
  Tensor* t = new_like(ctx, a, Op::ROPE, {a, pos, freq_factors});
  t->op_params[1] = p.n_dims;
  t->op_params[2] = int32_t(p.mode);
  t->op_params[4] = p.n_ctx_orig;
  t->set_param_f32(5, p.freq_base);
  t->set_param_f32(6, p.freq_scale);
  t->set_param_f32(7, p.ext_factor);
  t->set_param_f32(8, p.attn_factor);
  t->set_param_f32(9, p.beta_fast);
  t->set_param_f32(10, p.beta_slow);
  return t;
}

Tensor* get_rows(Context& ctx, Tensor* a, Tensor* idx) {
  require_operand(a, "get_rows", "a");
  require_operand(idx, "get_rows", "idx");
  require_type(idx, DType::I32, "get_rows", "idx");
  require(idx->ne[1] == a->ne[2] && idx->ne[2] == a->ne[3] && idx->ne[3] == 1, "get_rows",
          "idx must be [n, a.ne[2], a.ne[3]]", {a, idx});
  const DType out = a->type == DType::I32 ? DType::I32 : DType::F32;
  return new_result(ctx, out, {a->ne[0], idx->ne[0], idx->ne[1], idx->ne[2]}, Op::GET_ROWS, {a, idx});
}

Tensor* set_rows(Context& ctx, Tensor* dst, Tensor* src, Tensor* idx) {
  require_operand(dst, "set_rows", "dst");
  require_operand(src, "set_rows", "src");
  require_operand(idx, "set_rows", "idx");
  require(is_float(dst->type) || is_quantized(dst->type), "set_rows", "dst must be f32, f16, bf16 or a quantized type",
          {dst});
  require_type(src, DType::F32, "set_rows", "src");
  require_type(idx, DType::I32, "set_rows", "idx");
  require(src->ne[0] == dst->ne[0] && src->ne[2] == dst->ne[2] && src->ne[3] == dst->ne[3], "set_rows",
          "src must match dst in dims 0, 2 and 3", {dst, src});
  require(idx->ne[0] == src->ne[1] && idx->ne[3] == 1, "set_rows", "idx must hold one row index per src row",
          {src, idx});
  require(idx->ne[1] > 0 && idx->ne[2] > 0 && src->ne[2] % idx->ne[1] == 0 && src->ne[3] % idx->ne[2] == 0, "set_rows",
          "idx cannot be broadcast over src's dims 2 and 3", {src, idx});
  Tensor* t = new_view_node(ctx, dst, Op::SET_ROWS, {dst->ne[0], dst->ne[1], dst->ne[2], dst->ne[3]},
                            {dst->nb[0], dst->nb[1], dst->nb[2], dst->nb[3]}, 0, "set_rows");
  t->src[1] = src;
  t->src[2] = idx;
  return t;
}

Tensor* cpy(Context& ctx, Tensor* a, Tensor* b) {
  require_operand(a, "cpy", "a");
  require_operand(b, "cpy", "b");
  require(a->nelements() == b->nelements(), "cpy", "a and b must have the same element count", {a, b});
  const bool ints = a->type == DType::I32 && b->type == DType::I32;
  const bool numeric = a->type != DType::I32 && b->type != DType::I32;
  require(ints || numeric, "cpy", "i32 copies only to i32", {a, b});
  Tensor* t = new_view_node(ctx, b, Op::CPY, {b->ne[0], b->ne[1], b->ne[2], b->ne[3]},
                            {b->nb[0], b->nb[1], b->nb[2], b->nb[3]}, 0, "cpy");
  t->src[0] = a;
  t->src[1] = b;
  return t;
}

Tensor* cont(Context& ctx, Tensor* a) {
  require_operand(a, "cont", "a");
  return new_like(ctx, a, Op::CONT, {a});
}

Tensor* view_4d(Context& ctx, Tensor* a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3, size_t nb1, size_t nb2,
                size_t nb3, size_t offset) {
  require_operand(a, "view", "a");
  return new_view_node(ctx, a, Op::VIEW, {ne0, ne1, ne2, ne3}, {a->nb[0], nb1, nb2, nb3}, offset, "view");
}

Tensor* view_3d(Context& ctx, Tensor* a, int64_t ne0, int64_t ne1, int64_t ne2, size_t nb1, size_t nb2, size_t offset) {
  return view_4d(ctx, a, ne0, ne1, ne2, 1, nb1, nb2, nb2 * size_t(ne2), offset);
}

Tensor* view_2d(Context& ctx, Tensor* a, int64_t ne0, int64_t ne1, size_t nb1, size_t offset) {
  return view_4d(ctx, a, ne0, ne1, 1, 1, nb1, nb1 * size_t(ne1), nb1 * size_t(ne1), offset);
}

Tensor* view_1d(Context& ctx, Tensor* a, int64_t ne0, size_t offset) {
  require_operand(a, "view", "a");
  const size_t row = row_size(a->type, ne0);
  return view_4d(ctx, a, ne0, 1, 1, 1, row, row, row, offset);
}

Tensor* reshape(Context& ctx, Tensor* a, std::initializer_list<int64_t> shape) {
  require_operand(a, "reshape", "a");
  require(shape.size() >= 1 && shape.size() <= size_t(kMaxDims), "reshape", "1 to 4 dimensions expected", {a});
  require(a->is_contiguous(), "reshape", "a must be contiguous (use cont first)", {a});
  int64_t ne[kMaxDims] = {1, 1, 1, 1};
  std::copy(shape.begin(), shape.end(), ne);
  require(ne[0] * ne[1] * ne[2] * ne[3] == a->nelements(), "reshape",
          [&] {
            return "the element count must not change (new shape [" + std::to_string(ne[0]) + "," +
                   std::to_string(ne[1]) + "," + std::to_string(ne[2]) + "," + std::to_string(ne[3]) + "])";
          },
          {a});
  size_t nb[kMaxDims];
  nb[0] = dtype_traits(a->type).type_size;
  nb[1] = row_size(a->type, ne[0]);
  for (int i = 2; i < kMaxDims; ++i) nb[i] = nb[i - 1] * size_t(ne[i - 1]);
  return new_view_node(ctx, a, Op::RESHAPE, {ne[0], ne[1], ne[2], ne[3]}, {nb[0], nb[1], nb[2], nb[3]}, 0, "reshape");
}

Tensor* permute(Context& ctx, Tensor* a, int ax0, int ax1, int ax2, int ax3) {
  require_operand(a, "permute", "a");
  const int axes[kMaxDims] = {ax0, ax1, ax2, ax3};
  bool seen[kMaxDims] = {};
  for (int axis : axes) {
    require(axis >= 0 && axis < kMaxDims && !seen[axis], "permute", "axes must be a permutation of 0..3", {a});
    seen[axis] = true;
  }
  require(!is_quantized(a->type) || axes[0] == 0, "permute",
          [&] { return std::string(dtype_name(a->type)) + " blocks cannot be split: dimension 0 must stay in place"; },
          {a});
  int64_t ne[kMaxDims];
  size_t nb[kMaxDims];
  for (int i = 0; i < kMaxDims; ++i) {
    ne[axes[i]] = a->ne[i];
    nb[axes[i]] = a->nb[i];
  }
  return new_view_node(ctx, a, Op::PERMUTE, {ne[0], ne[1], ne[2], ne[3]}, {nb[0], nb[1], nb[2], nb[3]}, 0, "permute");
}

Tensor* transpose(Context& ctx, Tensor* a) {
  Tensor* t = permute(ctx, a, 1, 0, 2, 3);
  t->op = Op::TRANSPOSE;
  return t;
}

Tensor* flash_attn_ext(Context& ctx, Tensor* q, Tensor* k, Tensor* v, Tensor* mask, float scale, float max_bias,
                       float softcap) {
  require_operand(q, "flash_attn_ext", "q");
  require_operand(k, "flash_attn_ext", "k");
  require_operand(v, "flash_attn_ext", "v");
  require_type(q, DType::F32, "flash_attn_ext", "q");
  require_float(k, "flash_attn_ext", "k");
  require_float(v, "flash_attn_ext", "v");
  require(k->ne[0] == q->ne[0], "flash_attn_ext",
          [&] { return dim_mismatch("k.ne[0]", k->ne[0], "q.ne[0]", q->ne[0]); }, {q, k});
  require(v->ne[1] == k->ne[1] && v->ne[2] == k->ne[2] && v->ne[3] == k->ne[3], "flash_attn_ext",
          "v must match k in dims 1..3", {k, v});
  require(k->ne[2] > 0 && q->ne[2] % k->ne[2] == 0, "flash_attn_ext", "q heads must be a multiple of k heads", {q, k});
  require(k->ne[3] == q->ne[3], "flash_attn_ext", "q and k must have the same batch", {q, k});
  require(max_bias >= 0.0f && softcap >= 0.0f, "flash_attn_ext", "max_bias and softcap must be >= 0", {q});
  if (mask) {
    require(mask->type == DType::F32 || mask->type == DType::F16, "flash_attn_ext", "mask must be f32 or f16", {mask});
    require(mask->ne[0] == k->ne[1] && mask->ne[1] >= q->ne[1], "flash_attn_ext", "mask must be [n_kv, >= n_q, ...]",
            {q, k, mask});
    require((mask->ne[2] == 1 || mask->ne[2] == q->ne[2]) && (mask->ne[3] == 1 || mask->ne[3] == q->ne[3]),
            "flash_attn_ext", "mask dims 2 and 3 must be 1 or match q", {q, mask});
  }
  Tensor* t =
      new_result(ctx, DType::F32, {v->ne[0], q->ne[2], q->ne[1], q->ne[3]}, Op::FLASH_ATTN_EXT, {q, k, v, mask});
  t->set_param_f32(0, scale);
  t->set_param_f32(1, max_bias);
  t->set_param_f32(2, softcap);
  return t;
}

Tensor* sum_rows(Context& ctx, Tensor* a) {
  require_operand(a, "sum_rows", "a");
  require_type(a, DType::F32, "sum_rows", "a");
  return new_result(ctx, DType::F32, {1, a->ne[1], a->ne[2], a->ne[3]}, Op::SUM_ROWS, {a});
}

Tensor* argmax(Context& ctx, Tensor* a) {
  require_operand(a, "argmax", "a");
  require_type(a, DType::F32, "argmax", "a");
  require(a->ne[2] == 1 && a->ne[3] == 1, "argmax", "a must be 2-D", {a});
  require(a->ne[0] > 0 || a->ne[1] == 0, "argmax", "rows must not be empty", {a});
  return new_result(ctx, DType::I32, {a->ne[1], 1, 1, 1}, Op::ARGMAX, {a});
}

Tensor* batch_norm(Context& ctx, Tensor* x, Tensor* mean, Tensor* var, Tensor* gamma, Tensor* beta, float eps,
                   int axis) {
  require_operand(x, "batch_norm", "x");
  require_operand(mean, "batch_norm", "mean");
  require_operand(var, "batch_norm", "var");
  require_type(x, DType::F32, "batch_norm", "x");
  require(axis >= 0 && axis < kMaxDims, "batch_norm", "axis must be 0..3", {x});
  require(eps >= 0.0f, "batch_norm", "eps must be >= 0", {x});
  const int64_t channels = x->ne[axis];
  for (const Tensor* p : {mean, var, gamma, beta}) {
    if (!p) continue;
    require_type(p, DType::F32, "batch_norm", "per-channel parameters");
    require(
        p->ne[0] == channels && p->nelements() == channels, "batch_norm",
        [&] { return "per-channel parameters must be 1-D with x.ne[axis]=" + std::to_string(channels) + " entries"; },
        {x, p});
  }
  Tensor* t = new_like(ctx, x, Op::BATCH_NORM, {x, mean, var, gamma, beta});
  t->set_param_f32(0, eps);
  t->op_params[1] = axis;
  return t;
}

Tensor* conv_2d(Context& ctx, Tensor* kernel, Tensor* input, const Conv2dParams& p) {
  require_operand(kernel, "conv_2d", "kernel");
  require_operand(input, "conv_2d", "input");
  require(kernel->type == DType::F32 || kernel->type == DType::F16, "conv_2d", "kernel must be f32 or f16", {kernel});
  require_type(input, DType::F32, "conv_2d", "input");
  require(kernel->ne[2] == input->ne[2], "conv_2d",
          [&] { return dim_mismatch("kernel in-channels", kernel->ne[2], "input channels", input->ne[2]); },
          {kernel, input});
  require(p.s0 > 0 && p.s1 > 0 && p.d0 > 0 && p.d1 > 0 && p.p0 >= 0 && p.p1 >= 0, "conv_2d",
          "strides and dilations must be > 0, paddings >= 0", {kernel});
  const int64_t ow = conv_out_size(input->ne[0], kernel->ne[0], p.s0, p.p0, p.d0);
  const int64_t oh = conv_out_size(input->ne[1], kernel->ne[1], p.s1, p.p1, p.d1);
  require(kernel->ne[0] > 0 && kernel->ne[1] > 0 && ow > 0 && oh > 0, "conv_2d",
          "the dilated kernel does not fit the padded input", {kernel, input});
  Tensor* t = new_result(ctx, DType::F32, {ow, oh, kernel->ne[3], input->ne[3]}, Op::CONV_2D, {kernel, input});
  const int32_t params[6] = {p.s0, p.s1, p.p0, p.p1, p.d0, p.d1};
  std::copy_n(params, 6, t->op_params);
  return t;
}

Tensor* pool_2d(Context& ctx, Tensor* a, const Pool2dParams& p) {
  require_operand(a, "pool_2d", "a");
  require_type(a, DType::F32, "pool_2d", "a");
  require(p.op == PoolOp::MAX || p.op == PoolOp::AVG, "pool_2d", "op must be MAX or AVG", {a});
  require(p.k0 > 0 && p.k1 > 0 && p.s0 > 0 && p.s1 > 0 && p.p0 >= 0 && p.p1 >= 0 && p.p0 < p.k0 && p.p1 < p.k1,
          "pool_2d", "windows and strides must be > 0, 0 <= padding < window", {a});
  const int64_t ow = (a->ne[0] + 2 * int64_t(p.p0) - p.k0) / p.s0 + 1;
  const int64_t oh = (a->ne[1] + 2 * int64_t(p.p1) - p.k1) / p.s1 + 1;
  require(a->ne[0] + 2 * p.p0 >= p.k0 && a->ne[1] + 2 * p.p1 >= p.k1, "pool_2d",
          "the window does not fit the padded input", {a});
  Tensor* t = new_result(ctx, DType::F32, {ow, oh, a->ne[2], a->ne[3]}, Op::POOL_2D, {a});
  const int32_t params[7] = {int32_t(p.op), p.k0, p.k1, p.s0, p.s1, p.p0, p.p1};
  std::copy_n(params, 7, t->op_params);
  return t;
}

Tensor* concat(Context& ctx, Tensor* a, Tensor* b, int dim) {
  require_operand(a, "concat", "a");
  require_operand(b, "concat", "b");
  require(a->type == b->type, "concat", "a and b must have the same type", {a, b});
  require(!is_quantized(a->type), "concat",
          [&] { return std::string(dtype_name(a->type)) + " is not supported (dequantise first)"; }, {a});
  require(dim >= 0 && dim < kMaxDims, "concat", "dim must be 0..3", {a});
  int64_t ne[kMaxDims];
  for (int i = 0; i < kMaxDims; ++i) {
    require(i == dim || a->ne[i] == b->ne[i], "concat",
            [&] { return "shapes differ outside dim " + std::to_string(dim); }, {a, b});
    ne[i] = i == dim ? a->ne[i] + b->ne[i] : a->ne[i];
  }
  Tensor* t = new_result(ctx, a->type, {ne[0], ne[1], ne[2], ne[3]}, Op::CONCAT, {a, b});
  t->op_params[0] = dim;
  return t;
}

}  // namespace tg
