// The sharding search on the groups the front end makes of MLPs, conv -> batchnorm -> relu
// chains and llama blocks (channel counts 1, primes, around 32, 64 and 128):
//   - every candidate dataSplit accepts tiles the primary result exactly once over its tiles and
//     steps, and every value's window at every (tile, step) fits its slice;
//   - group-cost's plan fits the SPM and is the cheapest candidate (brute force over the stages);
//   - a 32-layer llama decode step is searched once per distinct group (GroupKey memo): the
//     counts say how many were reused, and the host time is printed.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <limits>

#include <mlir/Pass/PassManager.h>

#include "Transforms/DataSplit.h"
#include "Transforms/GroupCost.h"
#include "Transforms/ShardingCandidates.h"
#include "Transforms/WindowBytes.h"
#include "common/tensor_utils.h"
#include "compiler_case.h"
#include "random_graph.h"
#include "tilegraph/compiler/Dialect/Tx8be/Transforms/GroupPlan.h"
#include "tilegraph/compiler/Dialect/Tx8be/Transforms/Passes.h"
#include "tilegraph/compiler/Dialect/Tx8be/Transforms/SliceWindows.h"
#include "tilegraph/core/ops.h"
#include "tilegraph/model/llama_config.h"
#include "tilegraph/model/llama_model.h"
#include "tilegraph/model/llama_session.h"
#include "tilegraph/model/transformer_block.h"

namespace tg::compiler::tx8be {
namespace {

using test::Rng;

// A chip whose SPM is small enough that the test graphs' groups need several steps.
sim::ChipConfig small_chip() {
  sim::ChipConfig chip;
  chip.spm_bytes = 64 << 10;
  return chip;
}

struct Frontend {
  test::CompilerContext c;
  test::CompilerCase cc;
  mlir::ModuleOp module() { return *cc.imported.module; }
  std::vector<GroupOp> searchable() {
    std::vector<GroupOp> groups;
    module().walk([&](GroupOp g) {
      if (g.getGroupTag().value_or(0) != 2) groups.push_back(g);
    });
    return groups;
  }
};

std::unique_ptr<Frontend> through_frontend(const std::vector<Tensor*>& outputs) {
  auto f = std::make_unique<Frontend>();
  f->cc = test::make_compiler_case(f->c.context, outputs);
  EXPECT_EQ(test::run_pipeline(f->module(), "tx8-frontend"), "");
  return f;
}

std::vector<Tensor*> mlp(Context& ctx, int64_t n, uint32_t seed) {
  Rng rng(seed);
  Tensor* x = test::random_input(ctx, rng, DType::F32, {n, 5});
  Tensor* h = silu(ctx, add(ctx, mul_mat(ctx, test::random_weight(ctx, rng, DType::F16, {n, 67}), x),
                            test::random_weight(ctx, rng, DType::F32, {67})));
  Tensor* y = add(ctx, mul_mat(ctx, test::random_weight(ctx, rng, DType::F32, {67, n}), h),
                  test::random_weight(ctx, rng, DType::F32, {n}));
  return {rms_norm(ctx, y, 1e-5f)};
}

std::vector<Tensor*> conv_chain(Context& ctx, int64_t in, int64_t out, uint32_t seed) {
  Rng rng(seed);
  Tensor* image = test::random_input(ctx, rng, DType::F32, {12, 9, in, 1});
  Conv2dParams conv;
  conv.p0 = conv.p1 = 1;
  Tensor* y = conv_2d(ctx, test::random_weight(ctx, rng, DType::F32, {3, 3, in, out}), image, conv);
  Tensor* var = test::random_weight(ctx, rng, DType::F32, {out}, 0.5f, 2.0f);
  return {relu(ctx, batch_norm(ctx, y, test::random_weight(ctx, rng, DType::F32, {out}), var,
                               test::random_weight(ctx, rng, DType::F32, {out}),
                               test::random_weight(ctx, rng, DType::F32, {out}), 1e-5f))};
}

std::vector<Tensor*> llama_block(Context& ctx, int64_t tokens, uint32_t seed) {
  const model::LlamaConfig config = model::llama_preset("tiny");
  const model::BlockConfig block = config.block_config(64, DType::F16, DType::F16);
  Rng rng(seed);
  const model::BlockWeights weights = model::make_block_weights(ctx, block, seed);
  for (Tensor* t : weights.tensors()) {
    if (t) t->flags |= kFlagParam;
  }
  const model::KvCache cache = model::make_kv_cache(ctx, block);
  test::fill_uniform(*cache.k, rng);
  test::fill_uniform(*cache.v, rng);
  const model::StepInputs step = model::make_step_inputs(ctx, block, tokens, 16);
  Tensor* out = model::build_block(ctx, block, weights, cache, step, 16);
  ctx.allocate_all();
  model::fill_step_inputs(step, 4);
  test::fill_uniform(*step.x, rng);
  return {out};
}

// The graphs of the test: MLPs, conv chains and llama blocks around the NPU's alignments.
template <class Check>
void for_each_test_graph(const Check& check) {
  for (int64_t n : {1, 31, 64, 127}) {
    Context ctx;
    SCOPED_TRACE("mlp n = " + std::to_string(n));
    check(*through_frontend(mlp(ctx, n, uint32_t(n) + 7)));
  }
  for (auto [in, out] : {std::pair<int64_t, int64_t>{3, 32}, {33, 64}, {64, 129}}) {
    Context ctx;
    SCOPED_TRACE("conv " + std::to_string(in) + " -> " + std::to_string(out));
    check(*through_frontend(conv_chain(ctx, in, out, uint32_t(in * 3 + out))));
  }
  for (int64_t tokens : {1, 5}) {
    Context ctx;
    SCOPED_TRACE("llama block, tokens " + std::to_string(tokens));
    check(*through_frontend(llama_block(ctx, tokens, 11)));
  }
}

std::vector<std::vector<int32_t>> candidates_of(GroupOp group, const sim::ChipConfig& chip) {
  auto type = primaryValue(group).getType().cast<mlir::RankedTensorType>();
  const int32_t tiles = group.getDevRegionAttr()
                            ? group.getDevRegionAttr().getWidth() * group.getDevRegionAttr().getHeight()
                            : chip.tile_count();
  return shardingCandidates(type.getShape(), tiles, std::max<uint64_t>(1, window_bytes(type, {1})),
                            chip.ddr.burst_bytes);
}

// Every element of the primary result is in exactly one (tile, step) window, and every value's
// window fits its slice.
void expect_exact_cover(GroupOp group, const DataSplit& split) {
  auto type = primaryValue(group).getType().cast<mlir::RankedTensorType>();
  llvm::ArrayRef<int64_t> shape = type.getShape();
  std::vector<int> covered(size_t(type.getNumElements()), 0);
  int64_t tiles = 1;
  for (int32_t p : split.sharding) tiles *= p;
  llvm::DenseMap<mlir::Value, std::vector<int64_t>> slice_of;
  for (const ValueSlicing& v : split.values) slice_of[v.value] = v.slice;
  for (int64_t t = 0; t < tiles; ++t) {
    for (int64_t s = 0; s < split.steps; ++s) {
      const WindowParam w = primaryWindow(shape, split.sharding, split.slice, t, s);
      if (isEmpty(w)) continue;
      // Mark the window's elements (row-major over the result).
      std::vector<int64_t> index(w.start);
      for (;;) {
        int64_t linear = 0;
        for (size_t d = 0; d < shape.size(); ++d) linear = linear * shape[d] + index[d];
        ++covered[size_t(linear)];
        size_t d = shape.size();
        while (d-- > 0) {
          if (++index[d] < w.start[d] + w.size[d]) break;
          index[d] = w.start[d];
        }
        if (d == size_t(-1)) break;
      }
      auto windows = bodyWindows(group, w);
      ASSERT_TRUE(mlir::succeeded(windows));
      for (auto& [value, window] : *windows) {
        auto slice = slice_of.find(value);
        if (slice == slice_of.end()) continue;  // a block argument
        for (size_t d = 0; d < window.size.size(); ++d) {
          ASSERT_LE(window.size[d], slice->second[d]) << "a window outgrows its slice in dimension " << d;
        }
      }
    }
  }
  for (size_t i = 0; i < covered.size(); ++i) ASSERT_EQ(covered[i], 1) << "element " << i << " of the primary result";
}

TEST(GroupCost, EverySplitTilesThePrimaryResultExactlyOnceAndItsWindowsFitTheirSlices) {
  const sim::ChipConfig chip = small_chip();
  int splits = 0, stepped = 0;
  for_each_test_graph([&](Frontend& f) {
    for (GroupOp group : f.searchable()) {
      for (const std::vector<int32_t>& sharding : candidates_of(group, chip)) {
        DataSplit split;
        if (dataSplit(group, sharding, chip, split) != PlanStatus::Ok) continue;
        ++splits;
        stepped += split.steps > 1;
        expect_exact_cover(group, split);
        ASSERT_LE(spmBytesNeeded(split, chip), chip.spm_bytes);
      }
    }
  });
  std::printf("[ info ] %d splits checked, %d of them in several steps\n", splits, stepped);
  EXPECT_GT(stepped, 0);
}

TEST(GroupCost, ThePlanFitsTheSpmAndIsTheCheapestCandidate) {
  // Twice the small SPM: the 64 -> 129 channel convolution's program holds its input window three
  // times (loaded NCHW, transposed to NHWC, padded: tile_program_cnn.h), more than 64 KiB whatever
  // the split.
  sim::ChipConfig chip = small_chip();
  chip.spm_bytes *= 2;
  for_each_test_graph([&](Frontend& f) {
    // Brute force over the stages before the pass writes anything.
    std::vector<uint64_t> cheapest;
    for (GroupOp group : f.searchable()) {
      uint64_t best = std::numeric_limits<uint64_t>::max();
      for (const std::vector<int32_t>& sharding : candidates_of(group, chip)) {
        GroupPlan plan;
        if (dataSplit(group, sharding, chip, plan.split) != PlanStatus::Ok) continue;
        plan.pipeline = buildPipeline(group, plan.split);
        if (allocateSpm(group, plan.split, plan.pipeline, chip, plan.spm) != PlanStatus::Ok) continue;
        best = std::min(best, estimateCycles(group, plan, chip));
      }
      cheapest.push_back(best);
    }
    // The pass reads its chip from a file: the small one.
    const std::string path = ::testing::TempDir() + "group_cost_small_spm.json";
    {
      FILE* file = std::fopen(path.c_str(), "w");
      ASSERT_TRUE(file);
      std::fprintf(file, "{\"spm_bytes\": %llu}", (unsigned long long)chip.spm_bytes);
      std::fclose(file);
    }
    ASSERT_EQ(test::run_pipeline(f.module(), "group-cost{chip-config=" + path + "}"), "");
    const std::vector<GroupOp> groups = f.searchable();
    ASSERT_EQ(groups.size(), cheapest.size());
    for (size_t i = 0; i < groups.size(); ++i) {
      mlir::FailureOr<GroupPlan> plan = readPlan(groups[i]);
      ASSERT_TRUE(mlir::succeeded(plan));
      EXPECT_LE(plan->spm.peak, chip.spm_bytes);
      EXPECT_EQ(plan->estimatedCycles, cheapest[i]) << "group " << i;
    }
  });
}

TEST(GroupCost, IdenticalLayersOfA32LayerLlamaAreSearchedOnce) {
  model::LlamaConfig config = model::llama_preset("tiny");
  config.n_layer = 32;
  const model::LlamaModel llama = model::LlamaModel::generate(config, DType::F16, 5);
  const model::BlockConfig block = config.block_config(64, DType::F16, DType::F16);
  Context ctx;
  Rng rng(3);
  std::vector<model::KvCache> caches;
  for (int64_t l = 0; l < config.n_layer; ++l) {
    caches.push_back(model::make_kv_cache(ctx, block));
    test::fill_uniform(*caches.back().k, rng);
    test::fill_uniform(*caches.back().v, rng);
  }
  const model::LlamaStep step = model::build_llama_step(ctx, llama, block, caches, 1, 16, false);
  ctx.allocate_all();
  model::fill_step_inputs(step.inputs, 7);
  static_cast<int32_t*>(step.ids->data)[0] = 5;  // the token: the reference reads its embedding row
  auto f = through_frontend({step.logits});
  const size_t groups = f->searchable().size();

  mlir::PassManager pm(&f->c.context);
  GroupCostCounts counts;
  pm.addPass(createGroupCostPass(&counts));
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(mlir::succeeded(pm.run(f->module())));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("[ info ] 32-layer llama decode: %zu groups, %lld searched, %lld reused, %lld candidates, %.3f s\n",
              groups, (long long)counts.searched, (long long)counts.reused, (long long)counts.candidates, seconds);
  EXPECT_EQ(size_t(counts.searched + counts.reused), groups);
  // Layers 1 to 31 repeat layer 0: each of their groups reuses one of layer 0's.
  const int64_t per_layer = (int64_t(groups) - counts.searched) / 31;
  EXPECT_GE(counts.reused, 31 * per_layer);
  EXPECT_LE(counts.searched, int64_t(groups) / 16);
  // A reused plan names the group it came from, which is an earlier one with the same key.
  std::map<int32_t, GroupOp> by_id;
  for (GroupOp g : f->searchable()) by_id[int32_t(g.getGroupId())] = g;
  for (GroupOp g : f->searchable()) {
    const int32_t from = int32_t(g.getTemplateId());
    if (from < 0) continue;
    ASSERT_TRUE(by_id.count(from));
    EXPECT_LT(from, int32_t(g.getGroupId()));
    EXPECT_EQ(groupKey(by_id[from]), groupKey(g));
    EXPECT_EQ(g.getEstimatedCyclesAttr(), by_id[from].getEstimatedCyclesAttr());
  }
}

TEST(GroupCost, GroupKeysTellStructureApartButNotIdsOrConstantData) {
  Context ctx;
  auto f = through_frontend(mlp(ctx, 31, 9));
  std::vector<GroupOp> groups = f->searchable();
  ASSERT_GE(groups.size(), 2u);
  const std::string key = groupKey(groups[0]);
  groups[0].setGroupIdAttr(mlir::IntegerAttr::get(mlir::IntegerType::get(&f->c.context, 32), 99));
  EXPECT_EQ(groupKey(groups[0]), key);
  for (size_t i = 1; i < groups.size(); ++i) EXPECT_NE(groupKey(groups[i]), key);
}

}  // namespace
}  // namespace tg::compiler::tx8be
