// Graph construction: topological order, leafs vs nodes, shared sources visited once, deep chains.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "tilegraph/core/error.h"
#include "tilegraph/core/graph.h"
#include "tilegraph/core/ops.h"
#include "tilegraph/core/tensor_map.h"

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

TEST(Graph, ACycleLeavesTheGraphAsItWas) {
  Context ctx;
  Tensor* x = ctx.new_tensor(DType::F32, {4});
  Tensor* y = ctx.new_tensor(DType::F32, {4});
  Tensor* first = scale(ctx, x, 3.0f);
  Graph g = Graph::build(first);
  Tensor* a = add(ctx, x, y);
  Tensor* b = scale(ctx, a, 2.0f);
  Tensor* c = scale(ctx, b, 3.0f);
  a->src[1] = b;  // a -> b -> a
  EXPECT_THROW(g.expand(c), Error);
  EXPECT_EQ(g.size(), 1u);
  EXPECT_EQ(g.leafs().size(), 1u);
  EXPECT_EQ(g.outputs().size(), 1u);
  EXPECT_FALSE(c->flags & kFlagOutput);
  a->src[1] = y;  // fixed: the same call now adds a, b and c after what was there
  g.expand(c);
  ASSERT_EQ(g.size(), 4u);
  EXPECT_EQ(g.nodes()[0], first);
  EXPECT_EQ(g.nodes()[3], c);
  EXPECT_EQ(g.leafs().size(), 2u);
  EXPECT_EQ(g.ref_of(b), 2);
  EXPECT_EQ(g.sources(2).size(), 1u);
  EXPECT_EQ(g.sources(2)[0], 1);
}

TEST(Graph, DeepChainDoesNotOverflowTheStack) {
  Context ctx({.no_alloc = true});
  Tensor* t = ctx.new_tensor(DType::F32, {4});
  for (int i = 0; i < 200000; ++i) t = scale(ctx, t, 1.0f);
  Graph g = Graph::build(t);
  EXPECT_EQ(g.size(), 200000u);
  EXPECT_EQ(g.nodes().back(), t);
}

TEST(Graph, RefOfLocatesNodesAndLeafs) {
  Context ctx({.no_alloc = true});
  Tensor* x = ctx.new_tensor(DType::F32, {8});
  Tensor* y = ctx.new_tensor(DType::F32, {8});
  Tensor* a = add(ctx, x, y);
  Tensor* b = neg(ctx, a);
  Tensor* stranger = ctx.new_tensor(DType::F32, {8});
  Graph g = Graph::build(b);
  EXPECT_EQ(g.ref_of(a), 0);
  EXPECT_EQ(g.ref_of(b), 1);
  EXPECT_EQ(g.ref_of(x), leaf_ref(position(g.leafs(), x)));
  EXPECT_EQ(g.ref_of(y), leaf_ref(position(g.leafs(), y)));
  EXPECT_EQ(g.ref_of(stranger), kNoSource);
  EXPECT_EQ(g.source(1, 0), g.ref_of(a));
}

TEST(Graph, SourcesRunToTheLastSourceWithGapsKept) {
  Context ctx({.no_alloc = true});
  Tensor* x = ctx.new_tensor(DType::F32, {8});
  Tensor* y = ctx.new_tensor(DType::F32, {8});
  Tensor* none = ctx.new_tensor(DType::F32, {8});
  none->op = Op::SCALE;  // a node without sources
  Tensor* gap = add(ctx, x, y);
  gap->src[0] = nullptr;  // sources in slots 1 and 3 only
  gap->src[3] = none;
  Graph g = Graph::build(gap);
  ASSERT_EQ(g.size(), 2u);
  EXPECT_TRUE(g.sources(0).empty());
  EXPECT_EQ(g.source(0, 0), kNoSource);
  const std::vector<SourceRef> expected = {kNoSource, g.ref_of(y), kNoSource, g.ref_of(none)};
  EXPECT_EQ(std::vector<SourceRef>(g.sources(1).begin(), g.sources(1).end()), expected);
  EXPECT_EQ(g.source(1, 3), g.ref_of(none));
  EXPECT_EQ(g.source(1, kMaxSrc - 1), kNoSource);
}

TEST(TensorMap, InsertFindGrowAndClear) {
  std::vector<Tensor> tensors(5000);
  TensorMap map;
  EXPECT_EQ(map.find(&tensors[0]), nullptr);
  for (size_t i = 0; i < tensors.size(); ++i) {
    auto [value, inserted] = map.try_emplace(&tensors[i], int32_t(i));
    ASSERT_TRUE(inserted);
    EXPECT_EQ(*value, int32_t(i));
  }
  EXPECT_EQ(map.size(), tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    auto [value, inserted] = map.try_emplace(&tensors[i], -1);
    EXPECT_FALSE(inserted) << "an existing key keeps its value";
    EXPECT_EQ(*value, int32_t(i));
    ASSERT_NE(map.find(&tensors[i]), nullptr);
    EXPECT_EQ(*map.find(&tensors[i]), int32_t(i));
  }
  Tensor outsider;
  EXPECT_EQ(map.find(&outsider), nullptr);
  map.clear();
  EXPECT_EQ(map.size(), 0u);
  EXPECT_EQ(map.find(&tensors[7]), nullptr);
  map.reserve(10);
  EXPECT_TRUE(map.try_emplace(&tensors[7], 3).second);
  EXPECT_EQ(*map.find(&tensors[7]), 3);
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
