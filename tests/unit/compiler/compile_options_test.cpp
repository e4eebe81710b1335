// What compile_graph takes from its CompileOptions besides the graph: the chip every pass plans
// for (a smaller SPM cuts the same graph into more steps, and no plan exceeds it), and the
// sharding search's memo, which a second compile handed the same memo takes its plans from
// instead of searching.
#include <gtest/gtest.h>

#include "chip_run.h"
#include "random_graph.h"
#include "tilegraph/compiler/chip_program.h"
#include "tilegraph/core/ops.h"

namespace tg::compiler {
namespace {

using test::Rng;

// An MLP layer and an RMSNorm over a batch of 96 rows of 256.
Graph mlp(Context& ctx) {
  Rng rng{21};
  Tensor* x = test::random_input(ctx, rng, DType::F32, {256, 96});
  Tensor* h = unary(ctx, mul_mat(ctx, test::random_weight(ctx, rng, DType::F32, {256, 256}), x), UnaryOp::SILU);
  return Graph::build(rms_norm(ctx, h, 1e-5f));
}

int64_t total_steps(const CompileReport& report) {
  int64_t steps = 0;
  for (const GroupReport& g : report.groups) steps += g.steps;
  return steps;
}

TEST(CompileOptions, TheChipsSpmSizeIsWhatThePlansFit) {
  Context ctx;
  const Graph graph = mlp(ctx);
  CompileOptions large;
  large.chip = test::mesh(2, 2);
  CompileOptions small = large;
  small.chip.spm_bytes = 32 * 1024;
  const auto a = compile_graph(graph, large);
  const auto b = compile_graph(graph, small);
  ASSERT_EQ(a->report().groups.size(), b->report().groups.size());
  EXPECT_GT(total_steps(b->report()), total_steps(a->report()));
  for (const GroupReport& g : b->report().groups) {
    EXPECT_LE(g.spm_peak, small.chip.spm_bytes) << "group " << g.group_id;
  }
  // The smaller chip's program still computes the graph.
  {
    test::CompilerContext c;
    const std::vector<Tensor*> outputs = graph.outputs();
    const test::CompilerCase cc = test::make_compiler_case(c.context, outputs);
    const test::ChipRun run = test::run_on_chip(outputs, cc, small.chip);
    test::expect_close(run.results, cc.reference, 1e-10);
  }
}

TEST(CompileOptions, ASharedPlanMemoServesASecondCompileWithoutSearching) {
  Context ctx;
  const Graph graph = mlp(ctx);
  CompileOptions options;
  options.chip = test::mesh(2, 2);
  const auto alone = compile_graph(graph, options);
  const GroupCostCounts first = alone->report().search;
  EXPECT_GT(first.searched, 0);
  EXPECT_EQ(first.earlier, 0);

  options.plan_memo = make_group_plan_memo();
  const auto a = compile_graph(graph, options);
  EXPECT_EQ(a->report().search.searched, first.searched);
  const auto b = compile_graph(graph, options);
  const GroupCostCounts second = b->report().search;
  EXPECT_EQ(second.searched, 0);
  EXPECT_EQ(second.earlier, first.searched + first.reused);
  EXPECT_EQ(second.reused, second.earlier);
  // The same plans: the reports agree group by group.
  ASSERT_EQ(a->report().groups.size(), b->report().groups.size());
  for (size_t i = 0; i < a->report().groups.size(); ++i) {
    EXPECT_EQ(a->report().groups[i].sharding, b->report().groups[i].sharding);
    EXPECT_EQ(a->report().groups[i].steps, b->report().groups[i].steps);
    EXPECT_EQ(a->report().groups[i].estimated_cycles, b->report().groups[i].estimated_cycles);
  }

  // Another chip's plans are not taken.
  options.chip.spm_bytes = 32 * 1024;
  EXPECT_GT(compile_graph(graph, options)->report().search.searched, 0);
}

}  // namespace
}  // namespace tg::compiler
