// The software pipeline (buildPipeline) and the SPM allocation (allocateSpm) of every group of the
// regression set: MLPs, conv -> batchnorm -> relu, a LeNet-size CNN, an attention block, llama
// blocks (prefill and decode) and random graphs, through the front end, at several step counts.
// Each pipeline issues every op once per step (step-invariant ops once), after its producers,
// with the frames of different steps in one cycle on disjoint engines; each allocation is valid
// (buffers live at once never share a byte, all inside the SPM, 256-byte aligned) and its peak
// within 5% of the most bytes live in one cycle. The ratio of every group is printed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/DenseSet.h>
#include <mlir/Parser/Parser.h>

#include "Transforms/BufferLife.h"
#include "Transforms/SwPipeline.h"
#include "compiler_case.h"
#include "random_graph.h"
#include "tilegraph/compiler/Dialect/Tx8be/Transforms/GroupPlan.h"
#include "tilegraph/compiler/interpreter.h"
#include "tilegraph/core/ops.h"
#include "tilegraph/model/llama_config.h"
#include "tilegraph/model/transformer_block.h"

namespace tg::compiler::tx8be {
namespace {

using test::Rng;

// A data split as the search would give for `steps` steps: every value cut along its outermost
// dimension longer than 1 (ceil division), constants and what is computed from them alone
// whole and step-invariant.
DataSplit stepSplit(GroupOp group, int64_t steps) {
  DataSplit split;
  split.steps = steps;
  llvm::DenseSet<mlir::Value> invariant;
  for (mlir::Operation& op : group.getBodyBlock()) {
    if (mlir::isa<YieldOp>(op)) continue;
    bool opInvariant = mlir::isa<LoadConstOp>(op) ||
                       (op.getNumOperands() > 0 && llvm::all_of(op.getOperands(), [&](mlir::Value operand) {
                          return invariant.contains(operand);
                        }));
    for (mlir::Value result : op.getResults()) {
      auto type = result.getType().cast<mlir::RankedTensorType>();
      ValueSlicing slicing{.value = result, .slice = {type.getShape().begin(), type.getShape().end()}};
      slicing.sharding.assign(type.getRank(), 1);
      slicing.stepInvariant = opInvariant;
      if (opInvariant) {
        invariant.insert(result);
      } else {
        for (int64_t& extent : slicing.slice) {
          if (extent > 1) {
            extent = (extent + steps - 1) / steps;
            break;
          }
        }
      }
      split.values.push_back(slicing);
    }
  }
  if (!split.values.empty()) {
    split.sharding = split.values.back().sharding;
    split.slice = split.values.back().slice;
  }
  return split;
}

// Producers inside the body that `op` reads, and the step whose result it reads.
void expectPipelineOrder(GroupOp group, const DataSplit& split, const Pipeline& pipeline) {
  llvm::DenseSet<mlir::Value> invariantValues;
  for (const ValueSlicing& slicing : split.values) {
    if (slicing.stepInvariant) invariantValues.insert(slicing.value);
  }
  // Where each (op, step) was issued: cycle and position in the cycle.
  std::map<std::pair<mlir::Operation*, int64_t>, std::pair<size_t, size_t>> issued;
  for (size_t cycle = 0; cycle < pipeline.cycles.size(); ++cycle) {
    const auto& items = pipeline.cycles[cycle];
    std::map<PipelineEngine, int64_t> stepOnEngine;
    for (size_t i = 0; i < items.size(); ++i) {
      EXPECT_TRUE(issued.insert({{items[i].op, items[i].step}, {cycle, i}}).second) << "issued twice";
      EXPECT_EQ(items[i].engine, pipelineEngine(items[i].op));
    }
  }
  const int64_t steps = std::max<int64_t>(split.steps, 1);
  for (mlir::Operation& op : group.getBodyBlock()) {
    if (!isPipelined(&op)) continue;
    const bool invariant = llvm::all_of(op.getResults(), [&](mlir::Value v) { return invariantValues.contains(v); }) &&
                           llvm::all_of(op.getOperands(), [&](mlir::Value v) {
                             return !v.getDefiningOp() || invariantValues.contains(v);
                           });
    const int64_t issues = invariant ? 1 : steps;
    for (int64_t step = 0; step < issues; ++step) {
      auto at = issued.find({&op, step});
      ASSERT_NE(at, issued.end()) << op.getName().getStringRef().str() << " step " << step << " is not issued";
      for (mlir::Value operand : op.getOperands()) {
        mlir::Operation* producer = operand.getDefiningOp();
        if (!producer || !isPipelined(producer)) continue;
        auto from = issued.find({producer, step});
        if (from == issued.end()) from = issued.find({producer, 0});
        ASSERT_NE(from, issued.end());
        // Before the reader's cycle, or earlier in the same cycle on the same engine.
        const bool sameEngine = pipelineEngine(producer) == pipelineEngine(&op);
        EXPECT_TRUE(from->second.first < at->second.first ||
                    (sameEngine && from->second.first == at->second.first && from->second.second < at->second.second))
            << op.getName().getStringRef().str() << " step " << step << " reads "
            << producer->getName().getStringRef().str() << " before it is computed";
      }
    }
  }
}

struct Ratio {
  std::string group;
  double value;
};

// The pipeline and allocation of `group` for `split`: valid, and peak / bound recorded.
void expectValidPlan(GroupOp group, const DataSplit& split, const std::string& name, std::vector<Ratio>& ratios) {
  const sim::ChipConfig chip;
  SCOPED_TRACE(name);
  const Pipeline pipeline = buildPipeline(group, split);
  expectPipelineOrder(group, split, pipeline);
  SpmPlan spm;
  const PlanStatus status = allocateSpm(group, split, pipeline, chip, spm);
  const std::vector<BufferLife> lives = bufferLives(group, split, pipeline);
  // The placed buffer of each life: its root value's (every value of an in-place chain is
  // listed at the chain's offset) or its op's scratch.
  std::vector<const SpmBuffer*> placed;
  size_t listed = 0;
  for (const BufferLife& life : lives) {
    listed += life.scratchOf ? 1 : life.members.size();
    auto it = std::find_if(spm.buffers.begin(), spm.buffers.end(), [&](const SpmBuffer& b) {
      return life.scratchOf ? !b.value && b.scratchOf == life.scratchOf : b.value == life.value;
    });
    ASSERT_NE(it, spm.buffers.end());
    for (mlir::Value member : life.members) {
      auto entry =
          std::find_if(spm.buffers.begin(), spm.buffers.end(), [&](const SpmBuffer& b) { return b.value == member; });
      ASSERT_NE(entry, spm.buffers.end());
      EXPECT_EQ(entry->offset, it->offset);
    }
    placed.push_back(&*it);
  }
  EXPECT_EQ(listed, spm.buffers.size());
  for (size_t i = 0; i < lives.size(); ++i) {
    const SpmBuffer& a = *placed[i];
    EXPECT_EQ(a.offset % kSpmAlign, 0u);
    EXPECT_EQ(a.bytes % kSpmAlign, 0u);
    EXPECT_GT(a.bytes, 0u);
    EXPECT_LE(a.offset + a.bytes * a.copies, spm.peak);
    for (size_t j = i + 1; j < lives.size(); ++j) {
      if (!lifetimesOverlap(lives[i].intervals, lives[j].intervals)) continue;
      const SpmBuffer& b = *placed[j];
      EXPECT_TRUE(a.offset + a.bytes * a.copies <= b.offset || b.offset + b.bytes * b.copies <= a.offset)
          << "buffers " << i << " and " << j << " are live together in the same bytes";
    }
  }
  EXPECT_GE(spm.peak, spm.lowerBound);
  if (spm.peak <= chip.spm_bytes) {
    EXPECT_EQ(status, PlanStatus::Ok);
  } else {
    EXPECT_EQ(status, PlanStatus::SpmAllocFailed);
  }
  if (spm.lowerBound == 0) return;
  const double ratio = double(spm.peak) / double(spm.lowerBound);
  EXPECT_LE(ratio, 1.05) << "peak " << spm.peak << " lower bound " << spm.lowerBound;
  ratios.push_back({name, ratio});
}

// Every split group of the graph after the front end, cut in 1, 3 and 8 steps (stepSplit) and as
// the data-split pass cuts it.
void runRegressionCase(const std::string& name, const std::vector<Tensor*>& outputs, std::vector<Ratio>& ratios) {
  test::CompilerContext c;
  test::CompilerCase cc = test::make_compiler_case(c.context, outputs);
  mlir::ModuleOp module = *cc.imported.module;
  ASSERT_EQ(test::run_pipeline(module, "tx8-frontend"), "");
  const auto groupName = [&](GroupOp group) { return name + "/g" + std::to_string(int32_t(group.getGroupId())); };
  module.walk([&](GroupOp group) {
    if (worksInDdr(group)) return;
    for (int64_t steps : {1, 3, 8}) {
      expectValidPlan(group, stepSplit(group, steps), groupName(group) + "/s" + std::to_string(steps), ratios);
    }
  });
  ASSERT_EQ(test::run_pipeline(module, "data-split"), "");
  module.walk([&](GroupOp group) {
    if (worksInDdr(group)) return;
    mlir::FailureOr<GroupPlan> plan = readPlan(group);
    ASSERT_TRUE(mlir::succeeded(plan));
    expectValidPlan(group, plan->split, groupName(group) + "/data-split", ratios);
  });
  // The whole back end (the search's plans): every group placed within 5% of its bound, and the
  // module still computes what it did (the passes only add attributes).
  ASSERT_EQ(test::run_pipeline(module, "tx8-backend"), "");
  module.walk([&](GroupOp group) {
    if (worksInDdr(group)) return;
    mlir::FailureOr<GroupPlan> plan = readPlan(group);
    ASSERT_TRUE(mlir::succeeded(plan));
    expectValidPlan(group, plan->split, groupName(group) + "/group-cost", ratios);
    EXPECT_EQ(group.getSpmAllocSizeAttr().getInt(), int64_t(plan->spm.peak));
  });
  test::expect_close(interpret(module, cc.inputs, cc.imported.constants), cc.reference, 0.0, "after --tx8-backend");
}

Tensor* llamaBlock(Context& ctx, int64_t tokens) {
  const model::LlamaConfig config = model::llama_preset("tiny");
  const model::BlockConfig block = config.block_config(64, DType::F16, DType::F16);
  Rng rng(17);
  const model::BlockWeights weights = model::make_block_weights(ctx, block, 3);
  for (Tensor* t : weights.tensors()) {
    if (t) t->flags |= kFlagParam;
  }
  const model::KvCache cache = model::make_kv_cache(ctx, block);
  const model::StepInputs step = model::make_step_inputs(ctx, block, tokens, 32);
  Tensor* out = model::build_block(ctx, block, weights, cache, step, 32);
  ctx.allocate_all();
  test::fill_uniform(*cache.k, rng);
  test::fill_uniform(*cache.v, rng);
  model::fill_step_inputs(step, 4);
  test::fill_uniform(*step.x, rng);
  return out;
}

TEST(SpmAlloc, RegressionSetPlansAreValidAndWithinFivePercentOfTheLowerBound) {
  std::vector<Ratio> ratios;
  {
    Context ctx;
    Rng rng(5);
    Tensor* x = test::random_input(ctx, rng, DType::F32, {64, 33});
    Tensor* h = silu(ctx, add(ctx, mul_mat(ctx, test::random_weight(ctx, rng, DType::F16, {64, 128}), x),
                              test::random_weight(ctx, rng, DType::F32, {128})));
    runRegressionCase("mlp", {mul_mat(ctx, test::random_weight(ctx, rng, DType::F32, {128, 64}), h)}, ratios);
  }
  {
    Context ctx;
    Rng rng(6);
    Tensor* image = test::random_input(ctx, rng, DType::F32, {12, 10, 32, 2});
    Conv2dParams conv;
    conv.p0 = conv.p1 = 1;
    Tensor* y = conv_2d(ctx, test::random_weight(ctx, rng, DType::F32, {3, 3, 32, 64}), image, conv);
    Tensor* var = test::random_weight(ctx, rng, DType::F32, {64}, 0.5f, 2.0f);
    y = relu(ctx, batch_norm(ctx, y, test::random_weight(ctx, rng, DType::F32, {64}), var,
                             test::random_weight(ctx, rng, DType::F32, {64}),
                             test::random_weight(ctx, rng, DType::F32, {64}), 1e-5f));
    runRegressionCase("conv-bn-relu", {y}, ratios);
  }
  {
    Context ctx;
    Rng rng(7);
    Tensor* x = test::random_input(ctx, rng, DType::F32, {28, 28, 1, 1});
    x = pool_2d(ctx, relu(ctx, conv_2d(ctx, test::random_weight(ctx, rng, DType::F32, {5, 5, 1, 6}), x)), {});
    x = pool_2d(ctx, relu(ctx, conv_2d(ctx, test::random_weight(ctx, rng, DType::F32, {5, 5, 6, 16}), x)), {});
    x = reshape(ctx, x, {4 * 4 * 16, 1});
    x = relu(ctx, mul_mat(ctx, test::random_weight(ctx, rng, DType::F32, {256, 120}), x));
    x = relu(ctx, mul_mat(ctx, test::random_weight(ctx, rng, DType::F32, {120, 84}), x));
    runRegressionCase("lenet", {mul_mat(ctx, test::random_weight(ctx, rng, DType::F32, {84, 10}), x)}, ratios);
  }
  {
    Context ctx;
    Rng rng(8);
    Tensor* x = test::random_input(ctx, rng, DType::F32, {64, 16});
    Tensor* q = mul_mat(ctx, test::random_weight(ctx, rng, DType::F16, {64, 64}), x);
    Tensor* k = mul_mat(ctx, test::random_weight(ctx, rng, DType::F16, {64, 64}), x);
    Tensor* vt = mul_mat(ctx, x, test::random_weight(ctx, rng, DType::F32, {64, 64}));
    Tensor* p = soft_max(ctx, mul_mat(ctx, k, q), nullptr, 0.125f);
    Tensor* o = add(ctx, mul_mat(ctx, vt, p), x);
    runRegressionCase("attention", {mul_mat(ctx, test::random_weight(ctx, rng, DType::F32, {64, 64}), o)}, ratios);
  }
  for (int64_t tokens : {int64_t(1), int64_t(5)}) {
    Context ctx;
    runRegressionCase(tokens == 1 ? "llama-decode" : "llama-prefill", {llamaBlock(ctx, tokens)}, ratios);
  }
  for (uint32_t seed = 300; seed < 310; ++seed) {
    Context ctx;
    runRegressionCase("random" + std::to_string(seed), test::random_graph(ctx, seed), ratios);
  }
  ASSERT_FALSE(ratios.empty());
  double worst = 0;
  for (const Ratio& ratio : ratios) {
    std::printf("spm peak / lower bound %-28s %.4f\n", ratio.group.c_str(), ratio.value);
    worst = std::max(worst, ratio.value);
  }
  std::printf("spm peak / lower bound over %zu plans: worst %.4f\n", ratios.size(), worst);
}

// A small group by hand: load -> relu -> store at 4 steps with a weight added in.
constexpr const char* kChain = R"mlir(
func.func @chain(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %0 = tx8be.group(%x) {group_tag = 0 : i32} : (tensor<8x64xf32>) -> tensor<8x64xf32> {
  ^bb0(%a: tensor<8x64xf32>):
    %l = tx8be.load_var %a : (tensor<8x64xf32>) -> tensor<8x64xf32>
    %w = tx8be.load_const {const_map_id = 0 : i64, value = dense<1.0> : tensor<64xf32>} : tensor<64xf32>
    %s = tx8be.add %l, %w : (tensor<8x64xf32>, tensor<64xf32>) -> tensor<8x64xf32>
    %r = tx8be.relu %s : (tensor<8x64xf32>) -> tensor<8x64xf32>
    %o = tx8be.store_var %r : (tensor<8x64xf32>) -> tensor<8x64xf32>
    tx8be.yield %o : tensor<8x64xf32>
  }
  return %0 : tensor<8x64xf32>
}
)mlir";

TEST(SwPipeline, LoadsOfTheNextStepAndStoresOfThePreviousOverlapTheCompute) {
  test::CompilerContext c;
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::parseSourceString<mlir::ModuleOp>(kChain, &c.context);
  ASSERT_TRUE(module);
  GroupOp group;
  module->walk([&](GroupOp g) { group = g; });
  const DataSplit split = stepSplit(group, 4);
  const Pipeline pipeline = buildPipeline(group, split);
  // Frames: load (and the weight, once), add + relu on the CGRA, store; one step per cycle, the
  // older steps' items first.
  ASSERT_EQ(pipeline.cycles.size(), 6u);
  auto describe = [&](size_t cycle) {
    std::string text;
    for (const PipelineItem& item : pipeline.cycles[cycle]) {
      text += item.op->getName().getStringRef().drop_front(6).str() + ":" + std::to_string(item.step) + " ";
    }
    return text;
  };
  EXPECT_EQ(describe(0), "load_const:0 load_var:0 ");
  EXPECT_EQ(describe(1), "add:0 relu:0 load_var:1 ");
  EXPECT_EQ(describe(2), "store_var:0 add:1 relu:1 load_var:2 ");
  EXPECT_EQ(describe(3), "store_var:1 add:2 relu:2 load_var:3 ");
  EXPECT_EQ(describe(4), "store_var:2 add:3 relu:3 ");
  EXPECT_EQ(describe(5), "store_var:3 ");

  SpmPlan spm;
  ASSERT_EQ(allocateSpm(group, split, pipeline, sim::ChipConfig{}, spm), PlanStatus::Ok);
  // The weight once for all steps; the load's buffer, extended in place by add and relu, with one
  // copy per step in flight (loaded, computed, stored: three).
  // Listed per value: the load, the add and the relu at one offset, then the weight.
  ASSERT_EQ(spm.buffers.size(), 4u);
  const SpmBuffer& x = spm.buffers[0];
  const SpmBuffer& w = spm.buffers[3];
  EXPECT_EQ(spm.buffers[1].offset, x.offset);
  EXPECT_EQ(spm.buffers[2].offset, x.offset);
  EXPECT_TRUE(mlir::isa<ReluOp>(spm.buffers[2].value.getDefiningOp()));
  EXPECT_EQ(w.copies, 1);
  EXPECT_EQ(w.bytes, 256u);
  EXPECT_EQ(w.firstCycle, 0);
  EXPECT_EQ(w.lastCycle, 4);
  EXPECT_EQ(x.copies, 3);
  EXPECT_EQ(x.bytes, 2u * 64 * 4);
  EXPECT_EQ(x.firstCycle, 0);
  EXPECT_EQ(x.lastCycle, 5);
  EXPECT_EQ(spm.peak, 3u * 512 + 256);
  EXPECT_EQ(spm.lowerBound, spm.peak);

  // One step: no overlap, one copy.
  const DataSplit whole = stepSplit(group, 1);
  ASSERT_EQ(allocateSpm(group, whole, buildPipeline(group, whole), sim::ChipConfig{}, spm), PlanStatus::Ok);
  EXPECT_EQ(spm.buffers[0].copies, 1);
  EXPECT_EQ(spm.peak, 8u * 64 * 4 + 256);

  // An SPM too small for it.
  sim::ChipConfig tiny;
  tiny.spm_bytes = 1024;
  EXPECT_EQ(allocateSpm(group, split, pipeline, tiny, spm), PlanStatus::SpmAllocFailed);
}

TEST(SpmAlloc, MergeLifetimesJoinsOverlappingContainedAndTouchingIntervals) {
  const std::vector<LiveInterval> merged = mergeLifetimes({{5, 6}, {0, 3}, {1, 2}, {4, 4}, {9, 12}, {10, 11}});
  ASSERT_EQ(merged.size(), 2u);
  EXPECT_EQ(merged[0].first, 0);
  EXPECT_EQ(merged[0].last, 6);
  EXPECT_EQ(merged[1].first, 9);
  EXPECT_EQ(merged[1].last, 12);
  EXPECT_TRUE(lifetimesOverlap({{0, 2}, {8, 9}}, {{3, 5}, {9, 9}}));
  EXPECT_FALSE(lifetimesOverlap({{0, 2}, {8, 9}}, {{3, 7}, {10, 11}}));
}

// Random lifetimes, several intervals per buffer: placements never put two buffers live together
// in the same bytes, and never peak below the bound. The ratio is printed, not required: best
// fit has no guarantee on arbitrary lifetimes.
TEST(SpmAlloc, BestFitPlacementOfRandomLifetimesIsValid) {
  Rng rng(11);
  double worst = 1;
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<PlacedBuffer> buffers(2 + rng() % 40);
    for (PlacedBuffer& buffer : buffers) {
      buffer.bytes = kSpmAlign * (1 + rng() % 64);
      std::vector<LiveInterval> intervals(1 + rng() % 3);
      for (LiveInterval& interval : intervals) {
        interval.first = int64_t(rng() % 100);
        interval.last = interval.first + int64_t(rng() % 30);
      }
      buffer.intervals = mergeLifetimes(intervals);
    }
    const Placement placement = placeBestFit(buffers);
    ASSERT_EQ(placement.offsets.size(), buffers.size());
    for (size_t i = 0; i < buffers.size(); ++i) {
      EXPECT_EQ(placement.offsets[i] % kSpmAlign, 0u);
      EXPECT_LE(placement.offsets[i] + buffers[i].bytes, placement.peak);
      for (size_t j = i + 1; j < buffers.size(); ++j) {
        if (!lifetimesOverlap(buffers[i].intervals, buffers[j].intervals)) continue;
        EXPECT_TRUE(placement.offsets[i] + buffers[i].bytes <= placement.offsets[j] ||
                    placement.offsets[j] + buffers[j].bytes <= placement.offsets[i]);
      }
    }
    const uint64_t bound = liveBytesBound(buffers);
    EXPECT_GE(placement.peak, bound);
    worst = std::max(worst, double(placement.peak) / double(bound));
  }
  std::printf("best fit on random lifetimes: worst peak / lower bound %.4f\n", worst);
}

}  // namespace
}  // namespace tg::compiler::tx8be
