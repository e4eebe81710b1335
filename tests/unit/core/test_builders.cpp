// Op builders: result shapes and types, and that bad shapes or dtypes fail at build time with a
// message naming the op.
#include <gtest/gtest.h>

#include <string>

#include "tilegraph/core/error.h"
#include "tilegraph/core/ops.h"

namespace tg {
namespace {

// Expects tg::Error whose message starts with `op` and contains `fragment`.
template <typename Fn>
void expect_build_error(Fn fn, const std::string& op, const std::string& fragment = "") {
  try {
    fn();
    FAIL() << "expected tg::Error from " << op;
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.rfind(op + ":", 0), 0u) << message;
    EXPECT_NE(message.find(fragment), std::string::npos) << message;
  }
}

bool shape_is(const Tensor* t, int64_t a, int64_t b, int64_t c, int64_t d) {
  return t->ne[0] == a && t->ne[1] == b && t->ne[2] == c && t->ne[3] == d;
}

TEST(Builders, MulMatShapesAndErrors) {
  Context ctx({.no_alloc = true});
  Tensor* a = ctx.new_tensor(DType::Q8_0, {64, 30, 2});
  Tensor* b = ctx.new_tensor(DType::F32, {64, 5, 6});
  Tensor* r = mul_mat(ctx, a, b);
  EXPECT_TRUE(shape_is(r, 30, 5, 6, 1));
  EXPECT_EQ(r->type, DType::F32);
  EXPECT_EQ(r->src[0], a);
  expect_build_error(
      [&] {
        mul_mat(ctx, a, ctx.new_tensor(DType::F32, {32, 5}));
      },
      "mul_mat", "a.ne[0]=64 vs b.ne[0]=32");
  expect_build_error([&] { mul_mat(ctx, a, ctx.new_tensor(DType::F32, {64, 5, 3})); }, "mul_mat", "batch");
  expect_build_error([&] { mul_mat(ctx, a, ctx.new_tensor(DType::I32, {64, 5})); }, "mul_mat", "b must");
}

TEST(Builders, BinaryBroadcastRules) {
  Context ctx({.no_alloc = true});
  Tensor* a = ctx.new_tensor(DType::F16, {8, 6, 4});
  EXPECT_EQ(add(ctx, a, ctx.new_tensor(DType::F32, {8, 1, 2}))->type, DType::F16);
  expect_build_error([&] { mul(ctx, a, ctx.new_tensor(DType::F32, {8, 4})); }, "mul", "broadcast");
  expect_build_error([&] { sub(ctx, a, ctx.new_tensor(DType::I32, {8})); }, "sub", "f32, f16 or bf16");
  expect_build_error([&] { add(ctx, a, nullptr); }, "add", "null");
}

TEST(Builders, ViewsPermuteAndReshape) {
  Context ctx;
  Tensor* a = ctx.new_tensor(DType::F32, {4, 3, 2, 5});
  Tensor* p = permute(ctx, a, 2, 0, 3, 1);  // axis i of a -> axis ax[i]
  EXPECT_TRUE(shape_is(p, 3, 5, 4, 2));
  EXPECT_EQ(p->nb[2], a->nb[0]);
  EXPECT_EQ(p->view_src, a);
  EXPECT_EQ(p->data, a->data);
  EXPECT_FALSE(p->is_contiguous());
  EXPECT_TRUE(p->is_noop());
  Tensor* t = transpose(ctx, a);
  EXPECT_EQ(t->op, Op::TRANSPOSE);
  EXPECT_TRUE(shape_is(t, 3, 4, 2, 5));
  Tensor* v = view_2d(ctx, p, 3, 2, p->nb[1], 4);  // a view of a view aliases the storage
  EXPECT_EQ(v->view_src, a);
  EXPECT_EQ(v->view_offs, 4u);
  EXPECT_EQ(static_cast<char*>(v->data), static_cast<char*>(a->data) + 4);
  EXPECT_TRUE(shape_is(reshape(ctx, a, {12, 10}), 12, 10, 1, 1));
  expect_build_error([&] { reshape(ctx, p, {120}); }, "reshape", "contiguous");
  expect_build_error([&] { reshape(ctx, a, {7}); }, "reshape", "element count");
  expect_build_error([&] { permute(ctx, a, 0, 0, 1, 2); }, "permute", "permutation");
  expect_build_error([&] { view_1d(ctx, a, 121, 0); }, "view", "exceeds");
  expect_build_error([&] { view_1d(ctx, a, 1, 480); }, "view", "exceeds");
  expect_build_error([&] { transpose(ctx, ctx.new_tensor(DType::Q8_0, {32, 2})); }, "permute", "q8_0");
}

TEST(Builders, AttentionOps) {
  Context ctx({.no_alloc = true});
  Tensor* q = ctx.new_tensor(DType::F32, {64, 7, 8, 1});
  Tensor* k = ctx.new_tensor(DType::F16, {64, 33, 2, 1});
  Tensor* v = ctx.new_tensor(DType::F16, {48, 33, 2, 1});
  Tensor* mask = ctx.new_tensor(DType::F16, {33, 8});
  EXPECT_TRUE(shape_is(flash_attn_ext(ctx, q, k, v, mask, 0.125f), 48, 8, 7, 1));
  expect_build_error(
      [&] {
        flash_attn_ext(ctx, q, k, v, ctx.new_tensor(DType::F32, {33, 6}), 1.0f);
      },
      "flash_attn_ext", "mask");
  expect_build_error(
      [&] {
        flash_attn_ext(ctx, ctx.new_tensor(DType::F32, {64, 7, 3}), k, v, nullptr, 1.0f);
      },
      "flash_attn_ext", "multiple");
  Tensor* scores = ctx.new_tensor(DType::F32, {33, 7, 8});
  EXPECT_EQ(soft_max(ctx, scores, mask, 0.5f)->op, Op::SOFT_MAX);
  expect_build_error([&] { soft_max(ctx, scores, ctx.new_tensor(DType::F32, {32, 7})); }, "soft_max", "mask.ne[0]=32");
  RopeParams rp;
  rp.n_dims = 64;
  EXPECT_TRUE(shape_is(rope(ctx, q, ctx.new_tensor(DType::I32, {8}), rp), 64, 7, 8, 1));
  expect_build_error([&] { rope(ctx, q, ctx.new_tensor(DType::I32, {7}), rp); }, "rope", "pos");
  rp.n_dims = 65;
  expect_build_error([&] { rope(ctx, q, ctx.new_tensor(DType::I32, {8}), rp); }, "rope", "n_dims=65");
}

TEST(Builders, RowsAndCopies) {
  Context ctx({.no_alloc = true});
  Tensor* table = ctx.new_tensor(DType::Q8_0, {64, 100});
  Tensor* idx = ctx.new_tensor(DType::I32, {5});
  Tensor* rows = get_rows(ctx, table, idx);
  EXPECT_TRUE(shape_is(rows, 64, 5, 1, 1));
  EXPECT_EQ(rows->type, DType::F32);
  expect_build_error([&] { get_rows(ctx, table, ctx.new_tensor(DType::F32, {5})); }, "get_rows", "i32");
  Tensor* cache = ctx.new_tensor(DType::F16, {64, 100});
  Tensor* written = set_rows(ctx, cache, ctx.new_tensor(DType::F32, {64, 5}), idx);
  EXPECT_EQ(written->view_src, cache);
  EXPECT_EQ(written->op, Op::SET_ROWS);
  expect_build_error(
      [&] {
        set_rows(ctx, cache, ctx.new_tensor(DType::F32, {64, 4}), idx);
      },
      "set_rows", "one row index");
  expect_build_error([&] { cpy(ctx, ctx.new_tensor(DType::F32, {3}), ctx.new_tensor(DType::F32, {4})); }, "cpy",
                     "element count");
  expect_build_error(
      [&] {
        concat(ctx, ctx.new_tensor(DType::F32, {3, 2}), ctx.new_tensor(DType::F32, {3, 4}), 0);
      },
      "concat", "outside dim 0");
}

TEST(Builders, ConvAndPoolShapes) {
  Context ctx({.no_alloc = true});
  Tensor* kernel = ctx.new_tensor(DType::F16, {3, 3, 4, 8});
  Tensor* image = ctx.new_tensor(DType::F32, {13, 11, 4, 2});
  Tensor* out = conv_2d(ctx, kernel, image, {.s0 = 2, .s1 = 1, .p0 = 1, .p1 = 0, .d0 = 1, .d1 = 2});
  EXPECT_TRUE(shape_is(out, 7, 7, 8, 2));
  expect_build_error([&] { conv_2d(ctx, ctx.new_tensor(DType::F32, {3, 3, 5, 8}), image); }, "conv_2d", "in-channels");
  expect_build_error([&] { conv_2d(ctx, ctx.new_tensor(DType::F32, {20, 3, 4, 8}), image); }, "conv_2d", "fit");
  Tensor* pooled = pool_2d(ctx, image, {.op = PoolOp::AVG, .k0 = 3, .k1 = 3, .s0 = 2, .s1 = 2, .p0 = 1, .p1 = 1});
  EXPECT_TRUE(shape_is(pooled, 7, 6, 4, 2));
  expect_build_error([&] { pool_2d(ctx, image, {.k0 = 2, .k1 = 2, .s0 = 0}); }, "pool_2d", "> 0");
}

TEST(Builders, NegativeSizesAndNullOperands) {
  Context ctx;
  EXPECT_THROW(ctx.new_tensor(DType::F32, {4, -1}), Error);
  EXPECT_THROW(ctx.new_tensor(DType::Q8_0, {33}), Error);
  EXPECT_THROW(ctx.new_tensor(DType::F32, std::span<const int64_t>()), Error);
  Tensor* empty = ctx.new_tensor(DType::F32, {0, 5});
  EXPECT_EQ(empty->nbytes(), 0u);
  EXPECT_TRUE(empty->is_noop());
  expect_build_error([&] { unary(ctx, nullptr, UnaryOp::RELU); }, "unary", "null");
}

TEST(Builders, SizesThatWouldWrapAreRefused) {
  Context lazy({.no_alloc = true});
  constexpr int64_t k62 = int64_t(1) << 62, k32 = int64_t(1) << 32;
  expect_build_error([&] { lazy.new_tensor(DType::F32, {1, k62}); }, "new_tensor", "larger than the address space");
  expect_build_error(
      [&] {
        lazy.new_tensor(DType::F32, {k32, k32, k32});
      },
      "new_tensor", "larger than the address space");
  expect_build_error([&] { lazy.new_tensor(DType::F32, {k62 - 1}); }, "new_tensor", "larger than the address space");
  Context ctx;
  Tensor* x = ctx.new_tensor(DType::F32, {16});
  // Offsets, strides and counts whose products or sums wrap around to something small.
  expect_build_error([&] { view_1d(ctx, x, 4, SIZE_MAX - 7); }, "view", "exceeds");
  expect_build_error([&] { view_2d(ctx, x, 1, 2, size_t(-4), 0); }, "view", "exceeds");
  expect_build_error([&] { view_2d(ctx, x, 4, 3, size_t(1) << 63, 0); }, "view", "exceeds");
  expect_build_error([&] { view_2d(ctx, x, 1, k62 + 1, 4, 0); }, "view", "exceeds");
  EXPECT_EQ(view_2d(ctx, x, 4, 4, 16, 0)->nbytes(), 64u) << "the whole base still fits";
  // q8_0 views take whole blocks.
  Tensor* q = ctx.new_tensor(DType::Q8_0, {64, 2});
  expect_build_error([&] { view_2d(ctx, q, 16, 2, q->nb[1], 0); }, "view", "multiple of 32");
  expect_build_error([&] { view_2d(ctx, q, 32, 1, q->nb[1], 17); }, "view", "whole blocks");
  EXPECT_NO_THROW(view_2d(ctx, q, 32, 2, q->nb[1], 34));
}

}  // namespace
}  // namespace tg
