// Graph mode on the CPU backend: replayed, re-bound and fused plans must give bit-identical
// results to eager execution, and a stale capture must never be replayed. The centrepiece is a
// randomised run of 10,000 steps over mutating graphs (shapes, addresses, parameters, node
// counts) compared bit for bit with an eager backend on the same graph.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "common/tensor_utils.h"
#include "replay_plan.h"
#include "tilegraph/backends.h"
#include "tilegraph/core/ops.h"
#include "tilegraph/cpu/cpu_backend.h"
#include "tilegraph/runtime/graph_allocator.h"
#include "tilegraph/runtime/graph_mode.h"

namespace tg {
namespace {

std::unique_ptr<Backend> graph_backend(GraphModeConfig config, int threads = 2) {
  auto backend = make_backend("cpu", {.num_threads = threads});
  backend->graph_mode()->set_config(config);
  return backend;
}

std::unique_ptr<Backend> eager_backend(int threads = 2) {
  GraphModeConfig off;
  off.enabled = false;
  return graph_backend(off, threads);
}

// Eager and node by node: what every fusion must reproduce bit for bit.
std::unique_ptr<Backend> unfused_backend(int threads = 2) {
  auto backend = make_backend("cpu", {.num_threads = threads, .fuse = false});
  GraphModeConfig off;
  off.enabled = false;
  backend->graph_mode()->set_config(off);
  return backend;
}

// The replay plan of the most recently used capture, and how many captures there are.
const cpu::ReplayPlan* newest_plan(Backend& backend) {
  return backend.graph_mode()->with_cache([](const GraphCache& cache) {
    return cache.size() ? dynamic_cast<const cpu::ReplayPlan*>(cache.entries().front()->captured.get()) : nullptr;
  });
}
size_t captures(Backend& backend) {
  return backend.graph_mode()->with_cache([](const GraphCache& cache) { return cache.size(); });
}

// Overwrites `t` with NaNs before a replay, so that a replay which wrote nothing cannot pass for
// one that recomputed the capture's result.
void poison(const Tensor& t) { std::memset(t.data, 0xff, t.nbytes()); }

std::vector<char> bytes_of(const Tensor& t) {
  std::vector<char> out(t.nbytes());
  std::memcpy(out.data(), t.data, out.size());
  return out;
}

// One random program: a small decoder-like step whose every property can be redrawn.
struct Program {
  int64_t n_embd, n_out, n_tokens;
  DType weight_type;
  std::vector<int> chain;  // elementwise ops after the matmul: 0 scale, 1 unary, 2 add bias, 3 mul gate
  std::vector<float> params;
  bool soft_max_tail;
};

Program random_program(std::mt19937& rng) {
  auto pick = [&](std::initializer_list<int64_t> v) { return *(v.begin() + rng() % v.size()); };
  Program p;
  p.n_embd = pick({16, 32, 33});
  p.n_out = pick({8, 24});
  p.n_tokens = pick({1, 2, 5});
  p.weight_type = rng() % 2 ? DType::F32 : DType::F16;
  const int len = int(rng() % 4);
  for (int i = 0; i < len; ++i) {
    p.chain.push_back(int(rng() % 4));
    p.params.push_back(float(1 + rng() % 3) * 0.5f);
  }
  p.soft_max_tail = rng() % 2;
  return p;
}

// Leafs that persist across steps, in two copies so that steps can move addresses.
struct Weights {
  Context ctx;
  Tensor* w[2][2][3][2];  // [copy][type][embd idx][out idx]
  Tensor* gain[2][3];
  Tensor* bias[2][2];
  Tensor* cache[2];  // rows written by SET_ROWS: state that carries over between steps
  explicit Weights(std::mt19937& rng) {
    const int64_t embd[3] = {16, 32, 33}, out[2] = {8, 24};
    for (int c = 0; c < 2; ++c) {
      for (int t = 0; t < 2; ++t) {
        for (int e = 0; e < 3; ++e) {
          for (int o = 0; o < 2; ++o) {
            w[c][t][e][o] = ctx.new_tensor(t ? DType::F16 : DType::F32, {embd[e], out[o]});
            test::fill_uniform(*w[c][t][e][o], rng);
          }
        }
      }
      for (int e = 0; e < 3; ++e) {
        gain[c][e] = ctx.new_tensor(DType::F32, {embd[e]});
        test::fill_uniform(*gain[c][e], rng, 0.5f, 1.5f);
      }
      for (int o = 0; o < 2; ++o) {
        bias[c][o] = ctx.new_tensor(DType::F32, {out[o]});
        test::fill_uniform(*bias[c][o], rng);
      }
      cache[c] = ctx.new_tensor(DType::F32, {24, 8});
      test::fill_uniform(*cache[c], rng);
    }
  }
};

struct StepGraph {
  Context ctx{{.no_alloc = true}};
  Graph graph;
  Tensor *x, *idx;
};

// `expose_matmul`: the matmul's result, which the chain after it would absorb, is also an output.
std::unique_ptr<StepGraph> build(const Program& p, Weights& weights, int copy, bool expose_matmul = false) {
  auto s = std::make_unique<StepGraph>();
  Context& c = s->ctx;
  const int e = p.n_embd == 16 ? 0 : p.n_embd == 32 ? 1 : 2;
  const int o = p.n_out == 8 ? 0 : 1;
  s->x = c.new_tensor(DType::F32, {p.n_embd, p.n_tokens});
  s->x->flags |= kFlagInput;
  s->idx = c.new_tensor(DType::I32, {p.n_tokens});
  s->idx->flags |= kFlagInput;
  Tensor* h = mul(c, rms_norm(c, s->x, 1e-5f), weights.gain[copy][e]);
  Tensor* y = mul_mat(c, weights.w[copy][p.weight_type == DType::F16][e][o], h);
  Tensor* gate = mul_mat(c, weights.w[copy][0][e][o], h);
  Tensor* matmul = y;
  for (size_t i = 0; i < p.chain.size(); ++i) {
    switch (p.chain[i]) {
      case 0: y = scale(c, y, p.params[i], 0.25f); break;
      case 1: y = unary(c, y, p.params[i] > 1.0f ? UnaryOp::SILU : UnaryOp::TANH); break;
      case 2: y = add(c, y, weights.bias[copy][o]); break;
      default: y = mul(c, y, gate); break;
    }
  }
  if (p.soft_max_tail) y = soft_max(c, y, nullptr, p.params.empty() ? 1.0f : p.params[0]);
  // Write the rows into the persistent cache and read the whole cache back.
  Tensor* rows = p.n_out == 24 ? y : concat(c, concat(c, y, y, 0), y, 0);  // 8 -> 24 columns
  Tensor* written = set_rows(c, weights.cache[copy], rows, s->idx);
  Tensor* total = sum_rows(c, written);
  s->graph = Graph::build(y);
  s->graph.expand(total);
  if (expose_matmul) s->graph.expand(matmul);
  return s;
}

TEST(GraphReplay, RandomisedStepsAreBitIdenticalToEager) {
  std::mt19937 rng(2026);
  Weights weights(rng);
  GraphModeConfig config;
  config.capacity = 4;
  config.max_consecutive_updates = 1 << 30;  // exercise capture and eviction without pausing
  auto replaying = graph_backend(config);
  auto eager = eager_backend();
  auto unfused = unfused_backend();
  GraphAllocator allocator;
  std::vector<Program> pool;
  for (int i = 0; i < 8; ++i) pool.push_back(random_program(rng));

  constexpr int kSteps = 10000;
  for (int step = 0; step < kSteps; ++step) {
    if (rng() % 8 == 0) pool[rng() % pool.size()] = random_program(rng);  // a new structure
    const Program& p = pool[rng() % pool.size()];
    const int copy = rng() % 5 == 0 ? 1 : 0;  // sometimes the weights live elsewhere
    // Sometimes the same structure asks for an intermediate too: a plan that fused it away must
    // not be replayed.
    auto s = build(p, weights, copy, rng() % 6 == 0);
    allocator.allocate(s->graph, *replaying);
    test::fill_uniform(*s->x, rng);
    for (int64_t t = 0; t < p.n_tokens; ++t) static_cast<int32_t*>(s->idx->data)[t] = int32_t((step + t) % 8);

    replaying->compute(s->graph);
    std::vector<std::vector<char>> got;
    for (const Tensor* out : s->graph.outputs()) got.push_back(bytes_of(*out));
    for (Backend* other : {eager.get(), unfused.get()}) {
      other->compute(s->graph);
      for (size_t i = 0; i < got.size(); ++i) {
        ASSERT_EQ(got[i], bytes_of(*s->graph.outputs()[i]))
            << "step " << step << " output " << i << " differs from "
            << (other == eager.get() ? "eager" : "unfused eager") << " ("
            << format_stats(replaying->graph_mode()->stats()) << ")";
      }
    }
  }
  const GraphModeStats& stats = replaying->graph_mode()->stats();
  EXPECT_GT(stats.replays, uint64_t(kSteps / 3));
  EXPECT_GT(stats.captures, 10u);
  EXPECT_GT(stats.rebinds, 10u);
  EXPECT_GT(stats.evictions, 10u);
  std::printf("graph replay: %s\n", format_stats(stats).c_str());
}

TEST(GraphReplay, FusesRowOpChainsAndDropsNoOps) {
  Context weights;
  Tensor* gain = weights.new_tensor(DType::F32, {64});
  std::mt19937 rng(5);
  test::fill_uniform(*gain, rng);
  auto backend = graph_backend(GraphModeConfig{});
  Context ctx({.no_alloc = true});
  Tensor* x = ctx.new_tensor(DType::F32, {64, 3});
  x->flags |= kFlagInput;
  // rms_norm -> mul -> silu -> scale: one fused pass; the reshape is a no-op.
  Tensor* y = scale(ctx, silu(ctx, mul(ctx, rms_norm(ctx, x, 1e-5f), gain)), 0.5f);
  Tensor* out = reshape(ctx, y, {192});
  Graph g = Graph::build(out);
  GraphAllocator allocator;
  allocator.allocate(g, *backend);
  test::fill_uniform(*x, rng);
  backend->compute(g);
  const std::vector<char> captured = bytes_of(*out);
  ASSERT_EQ(captures(*backend), 1u);
  const cpu::ReplayPlan* plan = newest_plan(*backend);
  ASSERT_NE(plan, nullptr);
  EXPECT_EQ(plan->step_count(), 1u);
  EXPECT_EQ(plan->fused_node_count(), 4u);
  for (bool fused : {true, false}) {
    (fused ? eager_backend() : unfused_backend())->compute(g);
    EXPECT_EQ(bytes_of(*out), captured);
  }
  test::fill_uniform(*x, rng);  // the replay must read today's input
  unfused_backend()->compute(g);
  const std::vector<char> expected = bytes_of(*out);
  poison(*out);
  backend->compute(g);
  EXPECT_EQ(backend->graph_mode()->stats().replays, 1u);
  EXPECT_EQ(bytes_of(*out), expected);
}

// Allocates y's graph (its tensors without memory of their own) on a graph-mode backend, captures
// and replays it, and checks the replay against eager and node-by-node runs; `fused_nodes` (0: not
// checked) is how many nodes the plan must have fused.
void expect_replay_as_eager(Tensor* y, int threads, size_t fused_nodes) {
  auto backend = graph_backend(GraphModeConfig{}, threads);
  Graph g = Graph::build(y);
  GraphAllocator allocator;
  allocator.allocate(g, *backend);
  backend->compute(g);
  const cpu::ReplayPlan* plan = newest_plan(*backend);
  ASSERT_NE(plan, nullptr);
  if (fused_nodes != 0) {
    EXPECT_EQ(plan->fused_node_count(), fused_nodes);
  }
  poison(*y);
  backend->compute(g);  // the replay
  const std::vector<char> replayed = bytes_of(*y);
  for (bool fused : {true, false}) {
    (fused ? eager_backend(threads) : unfused_backend(threads))->compute(g);
    EXPECT_EQ(bytes_of(*y), replayed) << (fused ? "eager" : "unfused eager");
  }
}

// mul_mat -> add bias -> scale -> gelu -> mul gate runs as one GEMM with the row ops as its
// epilogue, bit-identical to eager; with batches and transposed operands too.
TEST(GraphReplay, FusesElementwiseOpsIntoTheMatmulEpilogue) {
  for (const int threads : {1, 2}) {
    for (const int64_t batches : {1, 3}) {
      // x: 0 row-major, 1 a transposed view (column-major), 2 computed in the graph. A computed
      // operand may share memory with the chain's output (the allocator reuses it once the GEMM
      // is its last reader): the chain must then stop short of that output.
      for (const int x_kind : {0, 1, 2}) {
        SCOPED_TRACE(testing::Message() << threads << " threads, " << batches << " batches, x kind " << x_kind);
        const bool transposed_x = x_kind == 1;
        std::mt19937 rng(11);
        Context weights;
        Tensor* w = weights.new_tensor(DType::F16, {37, 29, batches});
        Tensor* bias = weights.new_tensor(DType::F32, {29});
        Tensor* gate = weights.new_tensor(DType::F32, {29, 5, batches});
        // x [37, 5] stored row-major, or stored as [5, 37] and viewed transposed (column-major).
        Tensor* x_storage = transposed_x ? weights.new_tensor(DType::F32, {5, 37, batches})
                                         : weights.new_tensor(DType::F32, {37, 5, batches});
        for (Tensor* t : {w, bias, gate, x_storage}) test::fill_uniform(*t, rng);
        Context ctx({.no_alloc = true});
        Tensor* x = transposed_x ? transpose(ctx, x_storage) : x_storage;
        if (x_kind == 2) x = silu(ctx, x_storage);
        Tensor* y = mul(ctx, gelu(ctx, scale(ctx, add(ctx, mul_mat(ctx, w, x), bias), 0.75f, 0.125f)), gate);
        expect_replay_as_eager(y, threads, x_kind < 2 ? 5 : 0);
      }
    }
  }
}

// The same chain after quantized weights against more tokens than the matrix-vector path takes:
// the integer GEMM applies the row ops to each finished tile, bit-identical to eager and to the
// node-by-node run; over two items of weight rows (131 > 128), partial token tiles and batches.
TEST(GraphReplay, FusesElementwiseOpsIntoTheIntegerGemm) {
  for (const DType type : {DType::Q8_0, DType::Q4_0, DType::Q4_K, DType::Q6_K}) {
    for (const int threads : {1, 2}) {
      for (const int64_t batches : {1, 2}) {
        for (const bool computed_x : {false, true}) {
          SCOPED_TRACE(testing::Message() << dtype_name(type) << ", " << threads << " threads, " << batches
                                          << " batches" << (computed_x ? ", x computed" : ""));
          std::mt19937 rng(13);
          Context weights;
          Tensor* w = weights.new_tensor(type, {256, 131, batches});
          Tensor* bias = weights.new_tensor(DType::F32, {131});
          Tensor* gate = weights.new_tensor(DType::F32, {131, 21, batches});
          Tensor* x_storage = weights.new_tensor(DType::F32, {256, 21, batches});
          for (Tensor* t : {w, bias, gate, x_storage}) test::fill_uniform(*t, rng);
          Context ctx({.no_alloc = true});
          Tensor* x = computed_x ? silu(ctx, x_storage) : x_storage;
          Tensor* y = mul(ctx, gelu(ctx, scale(ctx, add(ctx, mul_mat(ctx, w, x), bias), 0.75f, 0.125f)), gate);
          expect_replay_as_eager(y, threads, computed_x ? 0 : 5);
        }
      }
    }
  }
}

// A chain value may be a binary op's second operand: the residual add after an output
// projection, and sub/div, whose operand order must survive. Each runs as the GEMM's epilogue (or
// in a row chain) with the unfused bits. GLU's second operand does not fuse (fusion.cpp): the up
// projection of swiglu(gate, up) stays a step of its own.
TEST(GraphReplay, FusesAChainValueThatIsTheSecondOperand) {
  for (const int threads : {1, 2}) {
    for (const int64_t tokens : {1, 7}) {
      SCOPED_TRACE(testing::Message() << threads << " threads, " << tokens << " tokens");
      std::mt19937 rng(17);
      Context weights;
      Tensor* w_up = weights.new_tensor(DType::F16, {40, 24});
      Tensor* w_out = weights.new_tensor(DType::F32, {24, 40});
      Tensor* x = weights.new_tensor(DType::F32, {40, tokens});
      Tensor* gate = weights.new_tensor(DType::F32, {24, tokens});
      Tensor* y = weights.new_tensor(DType::F32, {40, tokens});
      for (Tensor* t : {w_up, w_out, x, gate, y}) test::fill_uniform(*t, rng);
      auto backend = graph_backend(GraphModeConfig{}, threads);
      // Every result has memory of its own: an allocator that gave a chain's output the memory of
      // one of its operands would rightly stop the chain short (FusesElementwiseOps... above).
      Context ctx;
      Tensor* gated = swiglu(ctx, gate, mul_mat(ctx, w_up, x));         // two steps
      Tensor* residual = add(ctx, x, mul_mat(ctx, w_out, gated));       // matmul chain of 2
      Tensor* ordered = div(ctx, y, sub(ctx, residual, silu(ctx, y)));  // silu -> sub -> div: a row chain of 3
      Graph g = Graph::build(ordered);
      backend->compute(g);
      const cpu::ReplayPlan* plan = newest_plan(*backend);
      ASSERT_NE(plan, nullptr);
      EXPECT_EQ(plan->step_count(), 4u);
      EXPECT_EQ(plan->fused_node_count(), 5u);
      test::fill_uniform(*x, rng);
      poison(*ordered);
      backend->compute(g);  // the replay, on new input
      const std::vector<char> replayed = bytes_of(*ordered);
      for (bool fused : {true, false}) {
        (fused ? eager_backend(threads) : unfused_backend(threads))->compute(g);
        EXPECT_EQ(bytes_of(*ordered), replayed);
      }
    }
  }
}

TEST(GraphReplay, IntermediateReadTwiceIsNotFused) {
  auto backend = graph_backend(GraphModeConfig{});
  Context ctx;
  Tensor* x = ctx.new_tensor(DType::F32, {16, 2});
  std::mt19937 rng(9);
  test::fill_uniform(*x, rng);
  Tensor* a = silu(ctx, x);
  Tensor* out = add(ctx, scale(ctx, a, 2.0f), a);  // a feeds two nodes: it must be stored
  Graph g = Graph::build(out);
  backend->compute(g);
  const cpu::ReplayPlan* plan = newest_plan(*backend);
  ASSERT_NE(plan, nullptr);
  EXPECT_EQ(plan->fused_node_count(), 2u) << "scale -> add may fuse, silu may not";
  const std::vector<char> replayed = [&] {
    poison(*out);
    backend->compute(g);
    return bytes_of(*out);
  }();
  for (bool fused : {true, false}) {
    (fused ? eager_backend() : unfused_backend())->compute(g);
    EXPECT_EQ(bytes_of(*out), replayed);
  }
}

TEST(GraphReplay, AnIntermediateThatBecomesAnOutputIsComputed) {
  // The same graph at the same addresses, but the second step also asks for the intermediate
  // that the first step's plan fused away: the second step must capture again and write it.
  auto replaying = graph_backend(GraphModeConfig{}, 1);
  Context weights;
  Tensor* x = weights.new_tensor(DType::F32, {16, 2});
  std::mt19937 rng(5);
  test::fill_uniform(*x, rng);
  GraphAllocator allocator;
  for (const bool expose : {false, true}) {
    Context ctx({.no_alloc = true});
    Tensor* a = silu(ctx, x);
    Tensor* b = scale(ctx, a, 2.0f);
    Graph g = Graph::build(b);
    if (expose) g.expand(a);
    allocator.allocate(g, *replaying);
    std::fill_n(static_cast<float*>(a->data), 32, 12345.0f);
    replaying->compute(g);
    if (!expose) continue;
    const std::vector<char> got = bytes_of(*a);
    eager_backend(1)->compute(g);
    EXPECT_EQ(got, bytes_of(*a));
  }
  const GraphModeStats& stats = replaying->graph_mode()->stats();
  EXPECT_EQ(stats.replays, 0u) << format_stats(stats);
  EXPECT_EQ(stats.captures, 2u) << format_stats(stats);
}

TEST(GraphReplay, AHandBuiltViewKeepsItsBaseStored) {
  // peek views x without naming it as a source (Context::new_view): x must still be written,
  // eagerly and in replay, although the chain scale -> tanh could otherwise absorb it.
  Context weights;
  Tensor* in = weights.new_tensor(DType::F32, {8});
  for (int i = 0; i < 8; ++i) static_cast<float*>(in->data)[i] = float(i);
  for (const bool graph : {false, true}) {
    GraphModeConfig config;
    config.enabled = graph;
    auto backend = graph_backend(config, 1);
    Context ctx({.no_alloc = true});
    Tensor* x = scale(ctx, in, 2.0f);
    Tensor* y = tanh(ctx, x);
    const int64_t ne[1] = {8};
    const size_t nb[4] = {4, 32, 32, 32};
    Tensor* peek = ctx.new_view(x, DType::F32, ne, nb, 0);
    Graph g = Graph::build(std::vector<Tensor*>{y, peek});
    GraphAllocator allocator;
    allocator.allocate(g, *backend);
    std::fill_n(static_cast<float*>(x->data), 8, 0.0f);
    backend->compute(g);
    backend->compute(g);  // in graph mode: the replay
    EXPECT_EQ(static_cast<float*>(peek->data)[3], 6.0f) << (graph ? "graph mode" : "eager");
  }
}

TEST(GraphReplay, RefusedRebindCapturesAgain) {
  // The output moves onto an operand its fused chain reads: a re-bind cannot keep the fusion,
  // so the graph is captured again, and the result is still eager's.
  std::vector<char> results[2];
  for (const bool graph : {false, true}) {
    GraphModeConfig config;
    config.enabled = graph;
    auto backend = graph_backend(config, 1);
    Context ctx;
    Tensor* x = ctx.new_tensor(DType::F32, {16, 2});
    Tensor* gain = ctx.new_tensor(DType::F32, {16, 2});
    std::mt19937 rng(4);
    test::fill_uniform(*x, rng);
    test::fill_uniform(*gain, rng);
    Tensor* out = mul(ctx, silu(ctx, x), gain);
    Graph g = Graph::build(out);
    backend->compute(g);
    out->data = gain->data;
    backend->compute(g);
    results[graph] = bytes_of(*out);
    if (graph) {
      const GraphModeStats& stats = backend->graph_mode()->stats();
      EXPECT_EQ(stats.captures, 2u) << format_stats(stats);
      EXPECT_EQ(stats.rebinds, 0u) << format_stats(stats);
    }
  }
  EXPECT_EQ(results[0], results[1]);
}

TEST(GraphReplay, TenThousandNodesReplayAsEagerRunsThem) {
  Context weights;
  Tensor* x = weights.new_tensor(DType::F32, {64, 3});
  std::mt19937 rng(10);
  test::fill_uniform(*x, rng);
  Context ctx({.no_alloc = true});
  Tensor* t = x;
  for (int i = 0; i < 10000; ++i) t = i % 3 == 2 ? add(ctx, t, x) : scale(ctx, t, 1.0f + 0.001f * float(i % 7));
  Graph g = Graph::build(t);
  auto replaying = graph_backend(GraphModeConfig{});
  GraphAllocator allocator;
  allocator.allocate(g, *replaying);
  replaying->compute(g);  // capture
  poison(*t);
  replaying->compute(g);  // replay
  EXPECT_EQ(replaying->graph_mode()->stats().replays, 1u);
  const std::vector<char> replayed = bytes_of(*t);
  unfused_backend()->compute(g);
  EXPECT_EQ(bytes_of(*t), replayed);
}

// Eager execution fuses the same chains as a replay plan: the absorbed intermediates are never
// written, and the result has the bits of the node-by-node run, which does write them. The
// matmul is the float GEMM's (f16 weights) or the integer GEMM's (q8_0 against 12 tokens, more
// than the matrix-vector path takes).
TEST(EagerFusion, MatmulAndRowChainsSkipTheirIntermediates) {
  struct Weights {
    DType type;
    int64_t k, tokens;
  };
  for (const Weights weights : {Weights{DType::F16, 31, 3}, Weights{DType::Q8_0, 64, 12}}) {
    for (const int threads : {1, 2}) {
      SCOPED_TRACE(testing::Message() << dtype_name(weights.type) << ", " << threads << " threads");
      std::mt19937 rng(21);
      Context ctx;  // every tensor has memory of its own, so untouched intermediates show
      Tensor* w = ctx.new_tensor(weights.type, {weights.k, 17});
      Tensor* x = ctx.new_tensor(DType::F32, {weights.k, weights.tokens});
      Tensor* bias = ctx.new_tensor(DType::F32, {17});
      for (Tensor* t : {w, x, bias}) test::fill_uniform(*t, rng);
      Tensor* product = mul_mat(ctx, w, x);
      Tensor* biased = add(ctx, product, bias);
      Tensor* activated = gelu(ctx, biased);  // mul_mat -> add -> gelu: one GEMM
      Tensor* normed = rms_norm(ctx, activated, 1e-5f);
      Tensor* scaled = scale(ctx, normed, 0.5f);  // rms_norm -> scale: one row pass
      Tensor* out = sum_rows(ctx, scaled);
      Graph g = Graph::build(out);
      const float sentinel = 12345.0f;
      auto reset = [&] {
        for (Tensor* t : {product, biased, normed}) {
          for (int64_t i = 0; i < t->nelements(); ++i) static_cast<float*>(t->data)[i] = sentinel;
        }
      };
      reset();
      eager_backend(threads)->compute(g);
      for (Tensor* t : {product, biased, normed}) {
        EXPECT_EQ(static_cast<float*>(t->data)[0], sentinel) << t->name << ": a fused intermediate was written";
      }
      const std::vector<char> fused = bytes_of(*out), fused_scaled = bytes_of(*scaled);
      reset();
      unfused_backend(threads)->compute(g);
      EXPECT_NE(static_cast<float*>(product->data)[0], sentinel) << "node by node writes every result";
      EXPECT_EQ(bytes_of(*out), fused);
      EXPECT_EQ(bytes_of(*scaled), fused_scaled);
    }
  }
}

// Steps too small to split run whole on one thread each, and independent neighbours share one
// region: here the three projections of one input (a group), then steps that each need the last.
TEST(GraphReplay, IndependentSmallStepsRunSideBySide) {
  // width 128: 20 Ki + 2 x 12 Ki multiply-adds, each small enough to run alone, together worth a
  // second thread. width 32: too little work to wake one, so no group.
  for (const int64_t width : {128, 32}) {
    std::mt19937 rng(31);
    Context weights;
    Tensor* wq = weights.new_tensor(DType::F16, {width, width + width / 4});
    Tensor* wk = weights.new_tensor(DType::F16, {width, width * 3 / 4});
    Tensor* wv = weights.new_tensor(DType::F32, {width, width * 3 / 4});
    for (Tensor* t : {wq, wk, wv}) test::fill_uniform(*t, rng);
    for (const int threads : {1, 2, 3}) {
      SCOPED_TRACE(testing::Message() << "width " << width << ", " << threads << " threads");
      auto backend = graph_backend(GraphModeConfig{}, threads);
      Context ctx({.no_alloc = true});
      Tensor* x = ctx.new_tensor(DType::F32, {width, 1});
      x->flags |= kFlagInput;
      Tensor* h = rms_norm(ctx, x, 1e-5f);
      Tensor* q = mul_mat(ctx, wq, h);
      Tensor* k = mul_mat(ctx, wk, h);
      Tensor* v = mul_mat(ctx, wv, h);
      // Each of these reads the one before: no group.
      Tensor* kv = add(ctx, k, v);
      Tensor* out = concat(ctx, q, sum_rows(ctx, kv), 0);
      Graph g = Graph::build(out);
      GraphAllocator allocator;
      allocator.allocate(g, *backend);
      test::fill_uniform(*x, rng);
      backend->compute(g);
      const cpu::ReplayPlan* plan = newest_plan(*backend);
      ASSERT_NE(plan, nullptr);
      EXPECT_EQ(plan->grouped_step_count(), threads > 1 && width == 128 ? 3u : 0u) << "q, k and v form the only group";
      for (int replay = 0; replay < 3; ++replay) {
        test::fill_uniform(*x, rng);
        backend->compute(g);
        const std::vector<char> replayed = bytes_of(*out);
        for (bool fused : {true, false}) {
          (fused ? eager_backend(threads) : unfused_backend(threads))->compute(g);
          EXPECT_EQ(bytes_of(*out), replayed);
        }
      }
    }
  }
}

// Step groups under the allocator's memory reuse: random projection widths (groups form or not),
// a second group reading the first group's results, 2 and 3 threads; every replay must have the
// bits of eager and node-by-node runs.
TEST(GraphReplay, RandomisedStepGroupsAreBitIdenticalToEager) {
  std::mt19937 rng(77);
  Context weights;
  const int64_t widths[] = {64, 128, 192};
  Tensor* w[3][3];  // [input width][output width]
  for (int i = 0; i < 3; ++i) {
    for (int o = 0; o < 3; ++o) {
      w[i][o] = weights.new_tensor(o == 1 ? DType::F32 : DType::F16, {widths[i], widths[o]});
      test::fill_uniform(*w[i][o], rng);
    }
  }
  for (const int threads : {2, 3}) {
    auto replaying = graph_backend(GraphModeConfig{}, threads);
    auto eager = eager_backend(threads);
    auto unfused = unfused_backend(threads);
    GraphAllocator allocator;
    for (int step = 0; step < 200; ++step) {
      SCOPED_TRACE(testing::Message() << threads << " threads, step " << step);
      std::mt19937 shape_rng(unsigned(step % 6));  // six structures, each seen many times
      const int in = int(shape_rng() % 3), a = int(shape_rng() % 3), b = int(shape_rng() % 3);
      Context ctx({.no_alloc = true});
      Tensor* x = ctx.new_tensor(DType::F32, {widths[in], 1});
      x->flags |= kFlagInput;
      Tensor* h = rms_norm(ctx, x, 1e-5f);
      Tensor* p = silu(ctx, mul_mat(ctx, w[in][a], h));  // p, q, r: independent
      Tensor* q = mul_mat(ctx, w[in][a], h);
      Tensor* r = mul_mat(ctx, w[in][b], h);
      Tensor* s = mul_mat(ctx, w[a][b], p);  // s, t: read the first group's results
      Tensor* t = mul_mat(ctx, w[a][b], q);
      Tensor* out = add(ctx, add(ctx, s, t), r);
      // Expanded in this order, the nodes run h, p, q, r, s, t, then the adds.
      Tensor* const order[] = {p, q, r, s, t, out};
      Graph g = Graph::build(order);
      allocator.allocate(g, *replaying);
      test::fill_uniform(*x, rng);
      replaying->compute(g);
      const std::vector<char> replayed = bytes_of(*out);
      for (Backend* other : {eager.get(), unfused.get()}) {
        other->compute(g);
        ASSERT_EQ(bytes_of(*out), replayed) << (other == eager.get() ? "eager" : "unfused");
      }
    }
    EXPECT_GT(replaying->graph_mode()->stats().replays, 150u);
    const size_t grouped = replaying->graph_mode()->with_cache([](const GraphCache& cache) {
      size_t steps = 0;
      for (const auto& entry : cache.entries()) {
        steps += dynamic_cast<const cpu::ReplayPlan&>(*entry->captured).grouped_step_count();
      }
      return steps;
    });
    EXPECT_GT(grouped, 0u) << "no structure formed a step group";
  }
}

}  // namespace
}  // namespace tg
