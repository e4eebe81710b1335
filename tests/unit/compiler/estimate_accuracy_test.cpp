// The estimate (Estimate.cpp, the cost model the sharding search ranks candidates with) against
// the C-model: graphs of the regression set compiled with compile_graph and run on the chip, each
// group's estimated cycles compared with the cycles the chip's schedule took for it
// (GroupReport::estimated_cycles / simulated_cycles). The median relative error over the groups
// must stay within 10%, the target; every group's figures are printed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "chip_run.h"
#include "compiler_case.h"
#include "random_graph.h"
#include "tilegraph/compiler/chip_program.h"
#include "tilegraph/core/ops.h"
#include "tilegraph/model/llama_config.h"
#include "tilegraph/model/transformer_block.h"

namespace tg::compiler {
namespace {

using test::Rng;

struct GroupError {
  std::string graph;
  GroupReport group;
  double error = 0;
};

// Compiles and runs `outputs` on `chip`; appends every group's relative error.
void measure(const std::string& name, const std::vector<Tensor*>& outputs, const sim::ChipConfig& chip,
             std::vector<GroupError>& errors, MatmulKSplit kSplit = MatmulKSplit::Search) {
  test::CompilerContext c;
  const test::CompilerCase cc = test::make_compiler_case(c.context, outputs);
  CompileOptions options;
  options.chip = chip;
  options.matmul_k_split = kSplit;
  const test::ChipRun run = test::run_on_chip(outputs, cc, options);
  ASSERT_EQ(run.report.hazard_count, 0u);
  for (const GroupReport& g : run.compile.groups) {
    if (kSplit == MatmulKSplit::Always && g.ops == "matmul") {
      EXPECT_GT(g.k_panel, 0) << name;
    }
    if (g.simulated_cycles == 0 || g.estimated_cycles == 0) continue;  // a DDR move: not estimated
    const double error = std::abs(double(g.estimated_cycles) - double(g.simulated_cycles)) / double(g.simulated_cycles);
    errors.push_back({name, g, error});
  }
}

// A llama decoder block with f32 weights whose every op the chip runs: RMSNorm, the Q/K/V
// projections (K and V as wide as Q), attention over the step's own tokens (scores, softmax, the weighted sum), the
// output projection and residual, RMSNorm and the SwiGLU FFN with its residual.
Tensor* llamaBlockF32(Context& ctx, int64_t tokens) {
  const model::LlamaConfig config = model::llama_preset("tiny");
  model::BlockConfig block = config.block_config(64, DType::F32, DType::F32);
  block.n_head_kv = block.n_head;  // K as wide as Q: one head of scores over the whole width
  const model::BlockWeights w = model::make_block_weights(ctx, block, 3);
  for (Tensor* t : w.tensors()) {
    if (t) t->flags |= kFlagParam;
  }
  Rng rng(11);
  Tensor* x = test::random_input(ctx, rng, DType::F32, {block.n_embd, tokens});
  Tensor* h = mul(ctx, rms_norm(ctx, x, block.rms_eps), w.attn_norm);
  Tensor* q = mul_mat(ctx, w.wq, h);
  Tensor* k = mul_mat(ctx, w.wk, h);
  Tensor* vt = mul_mat(ctx, h, w.wv);
  Tensor* p = soft_max(ctx, mul_mat(ctx, k, q), nullptr, 1.0f / std::sqrt(float(block.head_dim())));
  x = add(ctx, x, mul_mat(ctx, w.wo, mul_mat(ctx, vt, p)));
  h = mul(ctx, rms_norm(ctx, x, block.rms_eps), w.ffn_norm);
  Tensor* ffn = swiglu(ctx, mul_mat(ctx, w.w_gate, h), mul_mat(ctx, w.w_up, h));
  return add(ctx, x, mul_mat(ctx, w.w_down, ffn));
}

TEST(EstimateAccuracy, MedianErrorOverTheRegressionSetIsWithinTenPercent) {
  std::vector<GroupError> errors;
  // Most graphs on a chip of a small SPM, which cuts them into many steps: there the loads, the
  // compute and the stores of neighbouring steps overlap and share the DDR, which a model that
  // sums the engines' work, or leaves out the latency or the sharing, gets wrong.
  sim::ChipConfig small_spm = test::mesh(2, 2);
  small_spm.spm_bytes = 32 * 1024;
  for (int64_t n : {1, 129}) {
    Context ctx;
    Rng rng{unsigned(n)};
    Tensor* x = test::random_input(ctx, rng, DType::F32, {n, 64});
    Tensor* h = unary(ctx,
                      add(ctx, mul_mat(ctx, test::random_weight(ctx, rng, DType::F32, {n, 128}), x),
                          test::random_weight(ctx, rng, DType::F32, {128})),
                      UnaryOp::RELU);
    Tensor* y = rms_norm(ctx, mul_mat(ctx, test::random_weight(ctx, rng, DType::F32, {128, 48}), h), 1e-5f);
    measure("mlp n" + std::to_string(n), {y}, small_spm, errors);
  }
  for (int64_t c : {31, 129}) {
    Context ctx;
    Rng rng{unsigned(c) + 100};
    Tensor* x = test::random_input(ctx, rng, DType::F32, {c, 40, 2});
    Tensor* row = test::random_weight(ctx, rng, DType::F32, {c});
    Tensor* gate = test::random_input(ctx, rng, DType::F32, {c, 40, 2});
    const std::vector<Tensor*> outs = {soft_max(ctx, scale(ctx, x, 0.5f, 0.25f)), norm(ctx, mul(ctx, x, row), 1e-5f),
                                       swiglu(ctx, x, gate), unary(ctx, sub(ctx, x, row), UnaryOp::SILU)};
    measure("rows c" + std::to_string(c), outs, small_spm, errors);
  }
  for (int64_t tokens : {1, 8}) {
    Context ctx;
    measure("llama block t" + std::to_string(tokens), {llamaBlockF32(ctx, tokens)},
            tokens == 1 ? test::mesh(4, 4) : small_spm, errors);
  }
  // Streams cut into many steps on 16 tiles, each tile's part of the DDR (12.8 bytes per cycle)
  // below a DMA engine's: a load and a store in flight together share it.
  sim::ChipConfig streaming = test::mesh(4, 4);
  streaming.spm_bytes = 32 * 1024;
  {
    Context ctx;
    Rng rng{3};
    Tensor* w = test::random_weight(ctx, rng, DType::BF16, {256, 256});
    Tensor* x = test::random_input(ctx, rng, DType::BF16, {256, 192});
    measure("gemm steps", {mul_mat(ctx, w, x)}, streaming, errors);
  }
  {
    Context ctx;
    Rng rng{5};
    Tensor* w = test::random_weight(ctx, rng, DType::F32, {64, 512});
    Tensor* x = test::random_input(ctx, rng, DType::F32, {64, 256});
    measure("gemm short k", {mul_mat(ctx, w, x)}, streaming, errors);
  }
  // K splits (PanelMatmul.h): panels shared over the NoC by a grid row and column of the 4x4
  // mesh, and loaded by each tile alone on one tile; the estimate adds the DTE's copies.
  {
    Context ctx;
    Rng rng{6};
    Tensor* w = test::random_weight(ctx, rng, DType::BF16, {1000, 384});
    Tensor* x = test::random_input(ctx, rng, DType::BF16, {1000, 256});
    measure("gemm k split", {mul_mat(ctx, w, x)}, test::mesh(4, 4), errors, MatmulKSplit::Always);
    measure("gemm k split 1", {mul_mat(ctx, w, x)}, test::mesh(1, 1), errors, MatmulKSplit::Always);
  }
  {
    Context ctx;
    Rng rng{4};
    Tensor* x = test::random_input(ctx, rng, DType::F32, {256, 512});
    Tensor* y = test::random_input(ctx, rng, DType::F32, {256, 512});
    Tensor* row = test::random_weight(ctx, rng, DType::F32, {256});
    measure("stream", {unary(ctx, add(ctx, x, y), UnaryOp::SILU)}, streaming, errors);
    measure("rows steps", {unary(ctx, add(ctx, rms_norm(ctx, x, 1e-5f), row), UnaryOp::SILU)}, streaming, errors);
  }
  int random = 0;
  for (uint32_t seed = 1; seed <= 40 && random < 4; ++seed) {
    Context ctx;
    const std::vector<Tensor*> outputs = test::random_graph(ctx, seed);
    if (!test::chip_runs_whole(outputs)) continue;
    measure("random " + std::to_string(seed), outputs, small_spm, errors);
    ++random;
  }
  ASSERT_GE(errors.size(), 20u);
  for (const GroupError& e : errors) {
    std::printf("%-16s g%-3d %-24s tiles %2d steps %3lld est %9llu sim %9llu err %6.1f%%\n", e.graph.c_str(),
                e.group.group_id, e.group.ops.substr(0, 24).c_str(), e.group.tiles, (long long)e.group.steps,
                (unsigned long long)e.group.estimated_cycles, (unsigned long long)e.group.simulated_cycles,
                100 * e.error);
  }
  // The target: the median over all groups. And every group of several steps, where the
  // overlap of neighbouring steps (and their sharing of the DDR) is what the model has to get
  // right, within the same 10% (a sum of per-cycle maxima misses that by 11-18% on the streams).
  std::vector<double> sorted;
  size_t stepped = 0;
  for (const GroupError& e : errors) {
    sorted.push_back(e.error);
    if (e.group.steps <= 1) continue;
    ++stepped;
    EXPECT_LE(e.error, 0.10) << e.graph << " group " << e.group.group_id << " (" << e.group.ops << "): estimated "
                             << e.group.estimated_cycles << ", simulated " << e.group.simulated_cycles;
  }
  std::sort(sorted.begin(), sorted.end());
  const double median = sorted[sorted.size() / 2];
  std::printf("estimate vs simulated: median |error| %.1f%% over %zu groups (%zu of several steps)\n", 100 * median,
              sorted.size(), stepped);
  EXPECT_LE(median, 0.10);
  EXPECT_GE(stepped, 8u);
}

}  // namespace
}  // namespace tg::compiler
