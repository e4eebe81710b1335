// Graph construction: topological order, leafs vs nodes, shared sources visited once, deep chains.
#include <gtest/gtest.h>

#include <algorithm>

#include "tilegraph/core/error.h"
#include "tilegraph/core/graph.h"
#include "tilegraph/core/ops.h"

namespace tg {
namespace {

size_t position(const std::vector<Tensor*>& v, const Tensor* t) {
  return size_t(std::find(v.begin(), v.end(), t) - v.begin());
}

TEST(Graph, NodesComeAfterTheirSources) {
  Context ctx({.no_alloc = true});
  Tensor* x = ctx.new_tensor(DType::F32, {8, 4});
  Tensor* w = ctx.new_tensor(DType::F32, {8, 8});
  Tensor* h = mul_mat(ctx, w, x);
  Tensor* out = add(ctx, relu(ctx, h), h);  // h has two consumers
  Graph g = Graph::build(out);
  ASSERT_EQ(g.size(), 3u);
  EXPECT_EQ(g.leafs().size(), 2u);
  for (const Tensor* node : g.nodes()) {
    for (const Tensor* src : node->src) {
      if (src && src->op != Op::NONE) {
        EXPECT_LT(position(g.nodes(), src), position(g.nodes(), node));
      }
    }
  }
  EXPECT_TRUE(out->flags & kFlagOutput);
  EXPECT_EQ(g.outputs().front(), out);
}

TEST(Graph, ExpandAddsOnlyNewNodes) {
  Context ctx({.no_alloc = true});
  Tensor* x = ctx.new_tensor(DType::F32, {8});
  Tensor* a = exp(ctx, x);
  Tensor* b = neg(ctx, a);
  Graph g = Graph::build(a);
  g.expand(b);
  EXPECT_EQ(g.size(), 2u);
  EXPECT_EQ(g.outputs().size(), 2u);
  EXPECT_THROW(g.expand(nullptr), Error);
}

TEST(Graph, DeepChainDoesNotOverflowTheStack) {
  Context ctx({.no_alloc = true});
  Tensor* t = ctx.new_tensor(DType::F32, {4});
  for (int i = 0; i < 200000; ++i) t = scale(ctx, t, 1.0f);
  Graph g = Graph::build(t);
  EXPECT_EQ(g.size(), 200000u);
  EXPECT_EQ(g.nodes().back(), t);
}

TEST(Graph, EmptyGraphHasNoNodes) {
  Graph g;
  EXPECT_TRUE(g.empty());
  Context ctx;
  Graph leaf_only = Graph::build(ctx.new_tensor(DType::F32, {3}));
  EXPECT_TRUE(leaf_only.empty());
  EXPECT_EQ(leaf_only.leafs().size(), 1u);
}

}  // namespace
}  // namespace tg
