// ROPE nodes share their frequencies and rotation tables through the backend's RopeCache: one
// graph holds single-position ROPEs that agree in everything but one property (position,
// frequency base, mode, rotated dims, YaRN, frequency factors, their values alone), in an order where
// each could be handed the previous node's tables; every node must get the bits it gets alone
// on a fresh backend. The graph then runs again with new positions and factor values in the same
// tensors, eagerly and replayed, so that a cache keyed on tensor addresses would be caught too.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <vector>

#include "common/tensor_utils.h"
#include "tilegraph/backends.h"
#include "tilegraph/core/context.h"
#include "tilegraph/core/graph.h"
#include "tilegraph/core/ops.h"
#include "tilegraph/runtime/graph_mode.h"

namespace tg {
namespace {

struct RopeCase {
  int pos_tensor;  // which of the two position tensors
  int factors;     // 0: none; 1 or 2: the first or second half of the factors tensor
  RopeParams params;
};

std::vector<RopeCase> cases() {
  RopeParams base;
  base.n_dims = 16;
  RopeParams other_base = base;
  other_base.freq_base = 500.0f;
  RopeParams neox = base;
  neox.mode = RopeMode::NEOX;
  RopeParams fewer_dims = base;
  fewer_dims.n_dims = 8;
  RopeParams yarn = base;
  yarn.n_ctx_orig = 64;
  yarn.freq_scale = 0.25f;
  yarn.ext_factor = 1.0f;
  return {{0, 0, base}, {0, 0, base}, {1, 0, base}, {1, 0, other_base}, {1, 0, neox}, {1, 0, fewer_dims}, {1, 0, yarn},
          {1, 1, base}, {1, 1, base}, {1, 2, base}, {1, 0, base},       {0, 1, neox}, {0, 0, base}};
}

// Where a case's factors start in the factors tensor, in bytes.
size_t factor_offset(const RopeCase& c) { return c.factors == 2 ? 8 * sizeof(float) : 0; }

struct Program {
  Context ctx;
  Tensor* x;
  Tensor* pos[2];
  Tensor* factors;
  std::vector<Tensor*> outputs;
  Graph graph;

  explicit Program(const std::vector<RopeCase>& list) {
    x = ctx.new_tensor(DType::F32, {24, 3, 1, 1});  // head_dim 24 (the last 8 or 16 copied), 3 heads, 1 token
    pos[0] = ctx.new_tensor(DType::I32, {1});
    pos[1] = ctx.new_tensor(DType::I32, {1});
    factors = ctx.new_tensor(DType::F32, {16});  // two halves of 8: up to n_dims / 2 each
    for (Tensor* t : {x, pos[0], pos[1], factors}) t->flags |= kFlagInput;
    Tensor* sum = nullptr;
    for (const RopeCase& c : list) {
      Tensor* y = rope(ctx, x, pos[c.pos_tensor], c.params,
                       c.factors ? view_1d(ctx, factors, c.params.n_dims / 2, factor_offset(c)) : nullptr);
      y->flags |= kFlagOutput;
      outputs.push_back(y);
      sum = sum ? add(ctx, sum, y) : y;
    }
    graph = Graph::build(sum);
  }

  void fill(uint32_t seed, int32_t p0, int32_t p1) {
    test::Rng rng(seed);
    test::fill_uniform(*x, rng);
    test::fill_uniform(*factors, rng, 1.0f, 4.0f);
    std::memcpy(pos[0]->data, &p0, sizeof p0);
    std::memcpy(pos[1]->data, &p1, sizeof p1);
  }
};

// The node's result computed alone on a backend that has run nothing else.
std::vector<float> alone(const Program& program, size_t i) {
  const RopeCase c = cases()[i];
  Context ctx;
  Tensor* x = ctx.new_tensor(DType::F32, {24, 3, 1, 1});
  Tensor* pos = ctx.new_tensor(DType::I32, {1});
  std::memcpy(x->data, program.x->data, x->nbytes());
  std::memcpy(pos->data, program.pos[c.pos_tensor]->data, sizeof(int32_t));
  Tensor* factors = nullptr;
  if (c.factors) {
    factors = ctx.new_tensor(DType::F32, {c.params.n_dims / 2});
    std::memcpy(factors->data, static_cast<const char*>(program.factors->data) + factor_offset(c), factors->nbytes());
  }
  Tensor* y = rope(ctx, x, pos, c.params, factors);
  auto backend = make_backend("cpu", {.num_threads = 1});
  backend->compute(Graph::build(y));
  return test::read_f32(*y);
}

void expect_each_node_as_alone(const Program& program, const char* what) {
  for (size_t i = 0; i < program.outputs.size(); ++i) {
    const std::vector<float> got = test::read_f32(*program.outputs[i]);
    const std::vector<float> want = alone(program, i);
    ASSERT_EQ(got.size(), want.size());
    EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0)
        << what << ": node " << i << ": " << test::describe_difference(got, want);
  }
}

TEST(RopeCache, EveryNodeGetsTheTablesOfItsOwnPositionAndParameters) {
  for (int threads : {1, 2}) {
    for (bool graph_mode : {false, true}) {
      Program program(cases());
      auto backend = make_backend("cpu", {.num_threads = threads});
      GraphModeConfig config = backend->graph_mode()->config();
      config.enabled = graph_mode;
      backend->graph_mode()->set_config(config);
      const int32_t steps[][2] = {{5, 5}, {5, 900}, {77, 77}, {77, 78}};
      for (uint32_t step = 0; step < 4; ++step) {
        program.fill(100 + step, steps[step][0], steps[step][1]);
        backend->compute(program.graph);
        expect_each_node_as_alone(program, graph_mode ? "graph mode" : "eager");
      }
      if (graph_mode) {
        EXPECT_GT(backend->graph_mode()->stats().replays, 0u);
      }
    }
  }
}

}  // namespace
}  // namespace tg
