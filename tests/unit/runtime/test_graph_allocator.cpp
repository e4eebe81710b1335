#include "tilegraph/runtime/graph_allocator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <string>

#include "common/tensor_utils.h"
#include "tilegraph/backends.h"
#include "tilegraph/core/ops.h"

namespace tg {
namespace {

using test::Rng;

Tensor* storage_of(Tensor* t) {
  while (t->view_src) t = t->view_src;
  return t;
}

// Lifetimes computed independently of the allocator: from the first node that needs a tensor's
// storage (-1 for leafs) to the last node touching it through any view (INT_MAX if pinned).
struct Lifetime {
  int first = INT_MAX;
  int last = -1;
};

std::map<const Tensor*, Lifetime> lifetimes(const Graph& graph) {
  std::map<const Tensor*, Lifetime> life;
  auto touch = [&](Tensor* t, int i) {
    Lifetime& l = life[storage_of(t)];
    l.first = std::min(l.first, i);
    l.last = std::max(l.last, i);
  };
  for (Tensor* leaf : graph.leafs()) touch(leaf, -1);
  for (int i = 0; i < int(graph.nodes().size()); ++i) {
    Tensor* node = graph.nodes()[i];
    touch(node, i);
    for (Tensor* src : node->src) {
      if (src) touch(src, i);
    }
  }
  auto pin = [&](Tensor* t) {
    if (t->flags & (kFlagInput | kFlagOutput)) life[storage_of(t)].last = INT_MAX;
  };
  for (Tensor* t : graph.leafs()) pin(t);
  for (Tensor* t : graph.nodes()) pin(t);
  return life;
}

// The allocator's central promise: tensors alive at the same time never share bytes.
void expect_no_live_overlap(const Graph& graph, const AllocationPlan& plan) {
  const auto life = lifetimes(graph);
  for (const TensorPlacement& p : plan.placements) {
    EXPECT_EQ(p.offset % kTensorAlignment, 0u) << describe(*p.tensor);
    EXPECT_GE(p.size, p.tensor->nbytes()) << describe(*p.tensor);
    EXPECT_LE(p.offset + p.size, plan.peak_bytes) << describe(*p.tensor);
  }
  for (size_t i = 0; i < plan.placements.size(); ++i) {
    const TensorPlacement& a = plan.placements[i];
    const Lifetime& la = life.at(a.tensor);
    for (size_t j = i + 1; j < plan.placements.size(); ++j) {
      const TensorPlacement& b = plan.placements[j];
      const Lifetime& lb = life.at(b.tensor);
      const bool live_together = la.first <= lb.last && lb.first <= la.last;
      const bool share_bytes = a.offset < b.offset + b.size && b.offset < a.offset + a.size;
      EXPECT_FALSE(live_together && share_bytes)
          << describe(*a.tensor) << " [" << a.offset << "+" << a.size << ", nodes " << la.first << ".." << la.last
          << "] overlaps " << describe(*b.tensor) << " [" << b.offset << "+" << b.size << ", nodes " << lb.first << ".."
          << lb.last << "]";
    }
  }
}

// A graph described once and built twice: in an allocating context (the oracle) and in a
// no_alloc context placed by the allocator.
using Fill = std::function<void(Tensor&, Rng&)>;
struct Input {
  Tensor* tensor;
  Fill fill;
};
struct Built {
  std::vector<Input> inputs;
  std::vector<Tensor*> outputs;
};
using Builder = std::function<Built(Context&)>;

void fill_inputs(const Built& built, uint32_t seed) {
  for (size_t i = 0; i < built.inputs.size(); ++i) {
    // Random graphs may leave an input unreachable; the allocator never places those.
    if (!built.inputs[i].tensor->data) continue;
    Rng rng(seed + uint32_t(i));
    built.inputs[i].fill(*built.inputs[i].tensor, rng);
  }
}

// Computes the graph both ways on the reference backend and requires bit-identical outputs: an
// output or a live intermediate overwritten by a later tensor changes the result.
AllocationPlan expect_same_as_allocating_context(const Builder& build, uint32_t seed) {
  auto backend = make_backend("reference");

  Context oracle_ctx;
  const Built oracle = build(oracle_ctx);
  fill_inputs(oracle, seed);
  const Graph oracle_graph = Graph::build(oracle.outputs);
  backend->compute(oracle_graph);

  Context ctx(ContextOptions{.no_alloc = true});
  const Built built = build(ctx);
  const Graph graph = Graph::build(built.outputs);
  GraphAllocator allocator;
  const AllocationPlan plan = allocator.allocate(graph, *backend);
  // Stale bytes must not leak into results: start from NaNs everywhere.
  for (const TensorPlacement& p : plan.placements) std::memset(p.tensor->data, 0xff, p.size);
  fill_inputs(built, seed);
  backend->compute(graph);

  EXPECT_EQ(oracle.outputs.size(), built.outputs.size());
  for (size_t i = 0; i < built.outputs.size(); ++i) {
    const std::vector<float> want = test::read_f32(*oracle.outputs[i]);
    const std::vector<float> got = test::read_f32(*built.outputs[i]);
    EXPECT_EQ(std::memcmp(want.data(), got.data(), want.size() * sizeof(float)), 0)
        << "output " << i << " " << describe(*built.outputs[i]) << ": " << test::describe_difference(got, want);
  }
  expect_no_live_overlap(graph, plan);
  return plan;
}

Fill uniform(float lo, float hi) {
  return [lo, hi](Tensor& t, Rng& rng) { test::fill_uniform(t, rng, lo, hi); };
}

// 0 on and below the diagonal, -inf above it.
void causal_mask(Tensor& t, Rng&) {
  std::vector<float> values(size_t(t.nelements()));
  for (int64_t i1 = 0; i1 < t.ne[1]; ++i1) {
    for (int64_t i0 = 0; i0 < t.ne[0]; ++i0) {
      values[size_t(i1 * t.ne[0] + i0)] = i0 > i1 ? -INFINITY : 0.0f;
    }
  }
  test::write_f32(t, values);
}

Tensor* input(Context& ctx, Built& built, DType type, std::initializer_list<int64_t> ne,
              Fill fill = uniform(-1.0f, 1.0f)) {
  Tensor* t = ctx.new_tensor(type, ne);
  t->flags |= kFlagInput;
  built.inputs.push_back({t, std::move(fill)});
  return t;
}

// Weights are filled like inputs but not flagged: the allocator may reuse their memory once the
// last node reading them has run.
Tensor* weight(Context& ctx, Built& built, std::initializer_list<int64_t> ne) {
  Tensor* t = ctx.new_tensor(DType::F32, ne);
  t->flags |= kFlagParam;
  built.inputs.push_back({t, uniform(-0.5f, 0.5f)});
  return t;
}

enum class Attention { kFlash, kSoftMax };

// One llama-style block: RMSNorm, Q/K/V projections with grouped-query heads, RoPE, causal
// attention, output projection, residual, RMSNorm, SwiGLU FFN, residual.
Built transformer_block(Context& ctx, Attention attention) {
  constexpr int64_t kHeadDim = 16, kHeads = 4, kKvHeads = 2, kTokens = 7, kFfn = 96;
  constexpr int64_t kDim = kHeadDim * kHeads, kKvDim = kHeadDim * kKvHeads;
  Built b;
  Tensor* x = input(ctx, b, DType::F32, {kDim, kTokens});
  Tensor* pos = input(ctx, b, DType::I32, {kTokens}, uniform(0, 100));
  Tensor* mask = input(ctx, b, DType::F32, {kTokens, kTokens}, causal_mask);
  Tensor* attn_norm = weight(ctx, b, {kDim});
  Tensor* wq = weight(ctx, b, {kDim, kDim});
  Tensor* wk = weight(ctx, b, {kDim, kKvDim});
  Tensor* wv = weight(ctx, b, {kDim, kKvDim});
  Tensor* wo = weight(ctx, b, {kDim, kDim});
  Tensor* ffn_norm = weight(ctx, b, {kDim});
  Tensor* w_gate = weight(ctx, b, {kDim, kFfn});
  Tensor* w_up = weight(ctx, b, {kDim, kFfn});
  Tensor* w_down = weight(ctx, b, {kFfn, kDim});

  RopeParams rope_params;
  rope_params.n_dims = kHeadDim;
  rope_params.mode = RopeMode::NEOX;
  const float kq_scale = 1.0f / std::sqrt(float(kHeadDim));

  Tensor* h = mul(ctx, rms_norm(ctx, x, 1e-5f), attn_norm);
  Tensor* q = rope(ctx, reshape(ctx, mul_mat(ctx, wq, h), {kHeadDim, kHeads, kTokens}), pos, rope_params);
  Tensor* k = rope(ctx, reshape(ctx, mul_mat(ctx, wk, h), {kHeadDim, kKvHeads, kTokens}), pos, rope_params);
  Tensor* v = reshape(ctx, mul_mat(ctx, wv, h), {kHeadDim, kKvHeads, kTokens});
  Tensor* qp = permute(ctx, q, 0, 2, 1, 3);  // [hd, T, H]
  Tensor* kp = permute(ctx, k, 0, 2, 1, 3);
  Tensor* attn = nullptr;
  if (attention == Attention::kFlash) {
    Tensor* fa = flash_attn_ext(ctx, qp, kp, permute(ctx, v, 0, 2, 1, 3), mask, kq_scale);
    attn = reshape(ctx, fa, {kDim, kTokens});
  } else {
    Tensor* probs = soft_max(ctx, mul_mat(ctx, kp, qp), mask, kq_scale);  // [T_kv, T_q, H]
    Tensor* vt = cont(ctx, permute(ctx, v, 1, 2, 0, 3));                  // [T_kv, hd, Hkv]
    Tensor* kqv = mul_mat(ctx, vt, probs);                                // [hd, T_q, H]
    attn = reshape(ctx, cont(ctx, permute(ctx, kqv, 0, 2, 1, 3)), {kDim, kTokens});
  }
  Tensor* x2 = add(ctx, x, mul_mat(ctx, wo, attn));
  Tensor* h2 = mul(ctx, rms_norm(ctx, x2, 1e-5f), ffn_norm);
  Tensor* ffn = swiglu(ctx, mul_mat(ctx, w_gate, h2), mul_mat(ctx, w_up, h2));
  b.outputs.push_back(add(ctx, x2, mul_mat(ctx, w_down, ffn)));
  return b;
}

TEST(GraphAllocator, EmptyGraph) {
  const Graph graph;
  const AllocationPlan plan = GraphAllocator::plan(graph);
  EXPECT_TRUE(plan.placements.empty());
  EXPECT_EQ(plan.peak_bytes, 0u);
  EXPECT_EQ(plan.unshared_bytes, 0u);

  auto backend = make_backend("reference");
  GraphAllocator allocator;
  allocator.allocate(graph, *backend);
  EXPECT_EQ(allocator.buffer_size(), 0u);
  EXPECT_NO_THROW(backend->compute(graph));
}

TEST(GraphAllocator, ZeroElementTensorsGetDistinctValidPointers) {
  Context ctx(ContextOptions{.no_alloc = true});
  Tensor* x = ctx.new_tensor(DType::F32, {0, 3});
  x->flags |= kFlagInput;
  Tensor* y = scale(ctx, x, 2.0f);
  const Graph graph = Graph::build(y);
  auto backend = make_backend("reference");
  GraphAllocator allocator;
  const AllocationPlan& plan = allocator.allocate(graph, *backend);
  ASSERT_EQ(plan.placements.size(), 2u);
  EXPECT_NE(x->data, nullptr);
  EXPECT_NE(y->data, nullptr);
  EXPECT_NE(x->data, y->data);
  EXPECT_NO_THROW(backend->compute(graph));
}

TEST(GraphAllocator, ChainReusesDeadIntermediates) {
  Context ctx(ContextOptions{.no_alloc = true});
  Tensor* x = ctx.new_tensor(DType::F32, {1024});
  x->flags |= kFlagInput;
  Tensor* y1 = scale(ctx, x, 2.0f);
  Tensor* y2 = scale(ctx, y1, 2.0f);
  Tensor* y3 = scale(ctx, y2, 2.0f);
  Tensor* y4 = scale(ctx, y3, 2.0f);
  const Graph graph = Graph::build(y4);
  const AllocationPlan plan = GraphAllocator::plan(graph);
  ASSERT_EQ(plan.placements.size(), 5u);
  EXPECT_EQ(plan.placements[0].tensor, x) << "leafs are placed before nodes";
  std::map<const Tensor*, size_t> offset;
  for (const TensorPlacement& p : plan.placements) offset[p.tensor] = p.offset;
  // y1 is dead once y2 exists, so y3 takes its place; likewise y4 takes y2's.
  EXPECT_EQ(offset[y3], offset[y1]);
  EXPECT_EQ(offset[y4], offset[y2]);
  EXPECT_EQ(plan.peak_bytes, 3 * 4096u);
  EXPECT_EQ(plan.unshared_bytes, 5 * 4096u);
  expect_no_live_overlap(graph, plan);
}

TEST(GraphAllocator, FreedNeighboursMergeIntoOneBlock) {
  // a and b are adjacent and die together; c needs both of their blocks at once.
  Context ctx(ContextOptions{.no_alloc = true});
  Tensor* x = ctx.new_tensor(DType::F32, {256});
  x->flags |= kFlagInput;
  Tensor* a = scale(ctx, x, 2.0f);
  Tensor* b = scale(ctx, x, 3.0f);
  Tensor* s = add(ctx, a, b);
  Tensor* wide = ctx.new_tensor(DType::F32, {512});
  Tensor* c = cpy(ctx, concat(ctx, s, s, 0), wide);
  const Graph graph = Graph::build(c);
  const AllocationPlan plan = GraphAllocator::plan(graph);
  std::map<const Tensor*, size_t> offset;
  for (const TensorPlacement& p : plan.placements) offset[p.tensor] = p.offset;
  EXPECT_EQ(offset.count(c), 0u) << "cpy writes into its destination and needs no memory";
  ASSERT_EQ(offset.count(wide), 1u);
  EXPECT_LT(offset[wide], offset[a]) << "leafs are placed before nodes";
  const Tensor* cat = c->src[0];
  EXPECT_EQ(offset[cat], std::min(offset[a], offset[b]));
  expect_no_live_overlap(graph, plan);
}

TEST(GraphAllocator, BestFitPrefersTheSmallestFreeBlock) {
  Context ctx(ContextOptions{.no_alloc = true});
  Tensor* large = ctx.new_tensor(DType::F32, {1024});
  Tensor* pinned = ctx.new_tensor(DType::F32, {256});  // keeps large's and small's blocks apart
  pinned->flags |= kFlagInput;
  Tensor* small = ctx.new_tensor(DType::F32, {256});
  Tensor* sum = add(ctx, add(ctx, view_1d(ctx, large, 256, 0), pinned), small);
  Tensor* out = scale(ctx, sum, 2.0f);
  const Graph graph = Graph::build(out);
  const AllocationPlan plan = GraphAllocator::plan(graph);
  std::map<const Tensor*, size_t> offset;
  for (const TensorPlacement& p : plan.placements) offset[p.tensor] = p.offset;
  // When out is placed, large's 4 KiB block and small's block (merged with the dead inner sum,
  // 2 KiB) are free; first fit would take the large one.
  EXPECT_EQ(offset[large], 0u);
  EXPECT_EQ(offset[out], offset[small]);
  expect_no_live_overlap(graph, plan);
}

TEST(GraphAllocator, ViewConsumersKeepTheBaseAlive) {
  Context ctx(ContextOptions{.no_alloc = true});
  Tensor* x = ctx.new_tensor(DType::F32, {32, 32});
  x->flags |= kFlagInput;
  Tensor* a = scale(ctx, x, 2.0f);
  Tensor* at = transpose(ctx, a);  // a's last direct reader; at's own reader comes much later
  Tensor* b = scale(ctx, x, 3.0f);
  Tensor* c = scale(ctx, b, 3.0f);
  Tensor* d = add(ctx, at, c);
  const Graph graph = Graph::build(d);
  const AllocationPlan plan = GraphAllocator::plan(graph);
  std::map<const Tensor*, size_t> offset;
  for (const TensorPlacement& p : plan.placements) offset[p.tensor] = p.offset;
  EXPECT_EQ(offset.count(at), 0u) << "views take their base's memory";
  EXPECT_NE(offset[b], offset[a]);
  EXPECT_NE(offset[c], offset[a]);
  expect_no_live_overlap(graph, plan);

  auto backend = make_backend("reference");
  GraphAllocator allocator;
  allocator.allocate(graph, *backend);
  EXPECT_EQ(at->data, a->data);
}

TEST(GraphAllocator, ViewOfATensorOutsideTheGraphGetsItsBasePlaced) {
  // A hand-built view whose storage tensor no graph node refers to: the storage is still
  // placed once, and both views alias it.
  Context ctx(ContextOptions{.no_alloc = true});
  Tensor storage;
  storage.ne[0] = 16;
  storage.nb[0] = sizeof(float);
  for (int d = 1; d < kMaxDims; ++d) storage.nb[d] = 16 * sizeof(float);
  Tensor first = storage, second = storage;
  first.ne[0] = second.ne[0] = 8;
  first.view_src = second.view_src = &storage;
  second.view_offs = 8 * sizeof(float);
  const Graph graph = Graph::build(add(ctx, &first, &second));
  const AllocationPlan plan = GraphAllocator::plan(graph);
  ASSERT_EQ(std::count_if(plan.placements.begin(), plan.placements.end(),
                          [&](const TensorPlacement& p) { return p.tensor == &storage; }),
            1);
  auto backend = make_backend("reference");
  GraphAllocator allocator;
  allocator.allocate(graph, *backend);
  ASSERT_NE(storage.data, nullptr);
  EXPECT_EQ(first.data, storage.data);
  EXPECT_EQ(second.data, static_cast<char*>(storage.data) + 8 * sizeof(float));
}

TEST(GraphAllocator, ResolveViewDataAddsOffsetsToTheBase) {
  Context ctx(ContextOptions{.no_alloc = true});
  Tensor* x = ctx.new_tensor(DType::F32, {8, 8});
  Tensor* v = view_2d(ctx, x, 4, 2, x->nb[1], 3 * x->nb[1] + 4 * sizeof(float));
  Tensor* vt = transpose(ctx, v);
  const Graph graph = Graph::build(cont(ctx, vt));
  std::vector<float> memory(64);
  x->data = memory.data();
  resolve_view_data(graph);
  EXPECT_EQ(v->data, memory.data() + 28);
  EXPECT_EQ(vt->data, memory.data() + 28);
}

TEST(GraphAllocator, ResolveViewDataFollowsAHandBuiltChainOfViews) {
  // v2 views v1 views s, built by hand (a Context's view ops alias the storage directly); v1 is
  // not in the graph, so only the sum of the offsets along the chain can place v2.
  Context ctx(ContextOptions{.no_alloc = true});
  Tensor* s = ctx.new_tensor(DType::F32, {16});
  const int64_t ne[1] = {8};
  const size_t nb[4] = {4, 32, 32, 32};
  Tensor* v1 = ctx.new_view(s, DType::F32, ne, nb, 16);
  Tensor* v2 = ctx.new_view(s, DType::F32, ne, nb, 0);
  v2->view_src = v1;  // by hand: new_view would alias s directly
  v2->view_offs = 8;
  Tensor* out = scale(ctx, v2, 2.0f);
  const Graph graph = Graph::build(out);
  std::vector<float> memory(16);
  s->data = memory.data();
  resolve_view_data(graph);
  EXPECT_EQ(v2->data, memory.data() + 6);
}

TEST(GraphAllocator, CallerMemoryIsLeftAlone) {
  Context weights;
  Tensor* w = weights.new_tensor(DType::F32, {16, 16});
  void* const w_data = w->data;
  Context ctx(ContextOptions{.no_alloc = true});
  Tensor* x = ctx.new_tensor(DType::F32, {16, 4});
  x->flags |= kFlagInput;
  Tensor* wt = transpose(ctx, w);
  Tensor* y = mul_mat(ctx, wt, x);
  const Graph graph = Graph::build(y);
  auto backend = make_backend("reference");
  GraphAllocator allocator;
  const AllocationPlan& plan = allocator.allocate(graph, *backend);
  EXPECT_EQ(plan.placements.size(), 2u);
  for (const TensorPlacement& p : plan.placements) EXPECT_NE(p.tensor, w);
  EXPECT_EQ(w->data, w_data);
  EXPECT_EQ(wt->data, w_data);
}

TEST(GraphAllocator, BufferIsReusedAndGraphsCanBeAllocatedAgain) {
  Context ctx(ContextOptions{.no_alloc = true});
  Tensor* x = ctx.new_tensor(DType::F32, {1000});
  x->flags |= kFlagInput;
  Tensor* big = scale(ctx, scale(ctx, x, 2.0f), 2.0f);
  Tensor* small = scale(ctx, view_1d(ctx, x, 10, 0), 2.0f);
  const Graph big_graph = Graph::build(big);
  const Graph small_graph = Graph::build(small);

  auto backend = make_backend("reference");
  GraphAllocator allocator;
  const size_t peak = allocator.allocate(big_graph, *backend).peak_bytes;
  EXPECT_EQ(allocator.buffer_size(), peak);
  void* const x_data = x->data;
  // Allocating the same graph again re-plans the tensors placed the first time.
  EXPECT_EQ(allocator.allocate(big_graph, *backend).placements.size(), 3u);
  EXPECT_EQ(x->data, x_data);
  allocator.allocate(small_graph, *backend);
  EXPECT_EQ(allocator.buffer_size(), peak) << "a smaller graph fits the existing buffer";
}

TEST(GraphAllocator, AGraphKeptAcrossABufferThatGrewIsPlacedAgain) {
  // small, then big (the buffer grows: the first one is released), then small again: small's
  // tensors must move into the new buffer, not keep pointers into the released one.
  Context ctx(ContextOptions{.no_alloc = true});
  Tensor* x = ctx.new_tensor(DType::F32, {16});
  x->flags |= kFlagInput;
  Tensor* small = scale(ctx, scale(ctx, x, 2.0f), 3.0f);
  Tensor* y = ctx.new_tensor(DType::F32, {1 << 16});
  y->flags |= kFlagInput;
  Tensor* big = scale(ctx, y, 2.0f);
  const Graph small_graph = Graph::build(small), big_graph = Graph::build(big);
  auto backend = make_backend("reference");
  GraphAllocator allocator;
  allocator.allocate(small_graph, *backend);
  const size_t first_size = allocator.buffer_size();
  const AllocationPlan& big_plan = allocator.allocate(big_graph, *backend);
  ASSERT_GT(allocator.buffer_size(), first_size);
  const char* base =
      static_cast<const char*>(big_plan.placements.front().tensor->data) - big_plan.placements.front().offset;
  const AllocationPlan& again = allocator.allocate(small_graph, *backend);
  ASSERT_EQ(again.placements.size(), 3u);
  for (const TensorPlacement& p : again.placements) {
    EXPECT_EQ(static_cast<const char*>(p.tensor->data), base + p.offset) << "placed in the current buffer";
  }
  for (int i = 0; i < 16; ++i) static_cast<float*>(x->data)[i] = float(i);
  backend->compute(small_graph);
  EXPECT_EQ(static_cast<float*>(small->data)[3], 18.0f);

  // Caller memory is never planned again.
  Context own;
  Tensor* input = own.new_tensor(DType::F32, {16});
  const Graph own_graph = Graph::build(scale(ctx, input, 2.0f));
  allocator.allocate(own_graph, *backend);
  const AllocationPlan& own_again = allocator.allocate(own_graph, *backend);
  ASSERT_EQ(own_again.placements.size(), 1u);
  EXPECT_NE(own_again.placements.front().tensor, input);
}

TEST(GraphAllocator, IntermediateOutputsAreNeverOverwritten) {
  const Builder build = [](Context& ctx) {
    Built b;
    Tensor* x = input(ctx, b, DType::F32, {64, 8});
    Tensor* first = silu(ctx, x);
    Tensor* t = first;
    for (int i = 0; i < 6; ++i) t = add(ctx, scale(ctx, t, 0.5f), x);
    b.outputs = {first, t};
    return b;
  };
  const AllocationPlan plan = expect_same_as_allocating_context(build, 7);
  EXPECT_LT(plan.peak_bytes, plan.unshared_bytes);
}

TEST(GraphAllocator, SetRowsAndCpyWriteIntoTheirDestination) {
  const Builder build = [](Context& ctx) {
    Built b;
    Tensor* cache = input(ctx, b, DType::F32, {16, 10});
    Tensor* rows = input(ctx, b, DType::F32, {16, 3});
    Tensor* idx = input(ctx, b, DType::I32, {3}, uniform(0, 10));
    Tensor* updated = set_rows(ctx, cache, scale(ctx, rows, 3.0f), idx);
    Tensor* staging = ctx.new_tensor(DType::F16, {16, 10});
    Tensor* copied = cpy(ctx, silu(ctx, updated), staging);
    b.outputs = {add(ctx, cont(ctx, copied), updated)};
    return b;
  };
  expect_same_as_allocating_context(build, 11);
}

TEST(GraphAllocator, TransformerBlockWithFlashAttention) {
  const Builder build = [](Context& ctx) { return transformer_block(ctx, Attention::kFlash); };
  const AllocationPlan plan = expect_same_as_allocating_context(build, 3);
  EXPECT_LT(plan.peak_bytes, plan.unshared_bytes);
}

TEST(GraphAllocator, TransformerBlockWithSoftMaxAttention) {
  const Builder build = [](Context& ctx) { return transformer_block(ctx, Attention::kSoftMax); };
  const AllocationPlan plan = expect_same_as_allocating_context(build, 5);
  EXPECT_LT(plan.peak_bytes, plan.unshared_bytes);
}

// Random DAGs of square [n, n] tensors mixing elementwise ops, views, in-place copies and extra
// outputs, so that lifetimes end at every kind of consumer.
Built random_graph(Context& ctx, uint32_t seed) {
  Rng rng(seed);
  auto pick = [&](int n) { return int(std::uniform_int_distribution<int>(0, n - 1)(rng)); };
  const int64_t n = std::array<int64_t, 4>{1, 3, 8, 17}[size_t(pick(4))];
  Built b;
  std::vector<Tensor*> pool;
  const int n_inputs = 1 + pick(3);
  for (int i = 0; i < n_inputs; ++i) pool.push_back(input(ctx, b, DType::F32, {n, n}));
  const int n_steps = 10 + pick(30);
  for (int step = 0; step < n_steps; ++step) {
    // Recent tensors are picked more often, which gives long chains as well as long-lived ones.
    auto operand = [&] {
      const int size = int(pool.size());
      return pool[size_t(pick(4) == 0 ? pick(size) : size - 1 - pick(std::min(size, 4)))];
    };
    Tensor* a = operand();
    Tensor* t = nullptr;
    switch (pick(9)) {
      case 0: t = add(ctx, a, operand()); break;
      case 1: t = mul(ctx, a, operand()); break;
      case 2: t = unary(ctx, a, std::array{UnaryOp::RELU, UnaryOp::TANH, UnaryOp::NEG}[size_t(pick(3))]); break;
      case 3: t = scale(ctx, a, 0.5f, 0.25f); break;
      case 4: t = transpose(ctx, a); break;
      case 5: t = view_2d(ctx, a, n, n, a->nb[1], 0); break;
      case 6: t = a->is_contiguous() ? reshape(ctx, a, {n * n}) : cont(ctx, a); break;
      case 7: t = cpy(ctx, a, ctx.new_tensor(DType::F32, {n, n})); break;
      case 8: t = soft_max(ctx, a); break;
    }
    if (t->ne[1] != n) t = reshape(ctx, cont(ctx, scale(ctx, t, 1.0f)), {n, n});
    pool.push_back(t);
    if (pick(8) == 0) b.outputs.push_back(t);
  }
  b.outputs.push_back(pool.back());
  return b;
}

TEST(GraphAllocator, RandomGraphs) {
  for (uint32_t seed = 0; seed < 60; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const Builder build = [seed](Context& ctx) { return random_graph(ctx, seed); };
    expect_same_as_allocating_context(build, seed);
  }
}

}  // namespace
}  // namespace tg
