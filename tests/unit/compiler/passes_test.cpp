// The front-end passes (--tx8-frontend) keep what a module computes. Core graphs (MLPs, conv ->
// batchnorm -> relu -> pool chains, random graphs, a llama block) are imported, checked against
// the core reference, and interpreted again after each pass, each run on the previous one's
// output. Tolerance 0: the passes only add identities (channel_norm, load_const, load_var,
// store_var) and move ops into groups, so every op still computes with the reference's own code
// on the same operands. After the whole pipeline every compute op sits in a tagged, mapped
// group; the embedded default model's decode step still gives the reference's logits.
#include <gtest/gtest.h>

#include <mlir/IR/MLIRContext.h>
#include <mlir/Parser/Parser.h>
#include <mlir/Pass/PassManager.h>

#include "Transforms/GroupPatternTrie.h"
#include "common/tensor_utils.h"
#include "compiler_case.h"
#include "random_graph.h"
#include "tilegraph/compiler/Dialect/Tx8be/Transforms/Passes.h"
#include "tilegraph/compiler/interpreter.h"
#include "tilegraph/core/ops.h"
#include "tilegraph/model/llama_config.h"
#include "tilegraph/model/llama_model.h"
#include "tilegraph/model/llama_session.h"
#include "tilegraph/model/transformer_block.h"

namespace tg::compiler {
namespace {

using test::Rng;

// --tx8-frontend one pass at a time, as textual pipelines on the module.
constexpr const char* kFrontendSteps[] = {"func.func(layout-init)",
                                          "func.func(layout-transmit)",
                                          "func.func(layout-align-to-npu)",
                                          "func.func(layout-align-opt)",
                                          "move-constant",
                                          "const-norm",
                                          "func.func(group-pattern)",
                                          "func.func(group-optimization)",
                                          "func.func(group-ldst)",
                                          "group-mapping"};

// After the whole front end: no constant left, every compute op in a group with a tag, an id
// and a region.
void expect_frontend_form(mlir::ModuleOp module) {
  module.walk([&](mlir::Operation* op) {
    if (mlir::isa<tx8be::ConstantOp>(op)) ADD_FAILURE() << "a tx8be.constant is left";
    if (mlir::isa<tx8be::ComputeInterface>(op) && !op->getParentOfType<tx8be::GroupOp>()) {
      ADD_FAILURE() << op->getName().getStringRef().str() << " is outside every group";
    }
  });
  int groups = 0;
  module.walk([&](tx8be::GroupOp group) {
    ++groups;
    EXPECT_TRUE(group.getGroupTagAttr());
    EXPECT_TRUE(group.getDevRegionAttr());
    EXPECT_GE(int32_t(group.getGroupId()), 0);
  });
  EXPECT_GT(groups, 0);
}

int count_ops(mlir::ModuleOp module, llvm::StringRef name) {
  int n = 0;
  module.walk([&](mlir::Operation* op) { n += op->getName().getStringRef() == name; });
  return n;
}

// Imports the graph of `outputs` (an allocating context, inputs and weights filled), checks the
// interpretation against the reference, then runs the front end a pass at a time, interpreting
// after each. Returns the final module's op counts by name for structural checks.
std::map<std::string, int> expect_frontend_preserves(const std::vector<Tensor*>& outputs) {
  test::CompilerContext c;
  test::CompilerCase cc = test::make_compiler_case(c.context, outputs);
  mlir::ModuleOp module = *cc.imported.module;
  const std::vector<HostTensor> before = interpret(module, cc.inputs, cc.imported.constants);
  test::expect_close(before, cc.reference, 0.0, "the import");
  for (const char* step : kFrontendSteps) {
    const std::string error = test::run_pipeline(module, step);
    if (!error.empty()) {
      ADD_FAILURE() << step << ": " << error;
      return {};
    }
    test::expect_close(interpret(module, cc.inputs, cc.imported.constants), before, 0.0, std::string("after ") + step);
  }
  expect_frontend_form(module);
  std::map<std::string, int> counts;
  module.walk([&](mlir::Operation* op) { ++counts[op->getName().getStringRef().str()]; });
  return counts;
}

TEST(CompilerPasses, MlpsKeepTheirResults) {
  for (int64_t n : {1, 7, 32, 33, 64, 128}) {
    Context ctx;
    Rng rng(unsigned(n) + 100);
    Tensor* x = test::random_input(ctx, rng, DType::F32, {n, 3});
    Tensor* h = silu(ctx, add(ctx, mul_mat(ctx, test::random_weight(ctx, rng, DType::F16, {n, 31}), x),
                              test::random_weight(ctx, rng, DType::F32, {31})));
    Tensor* y = add(ctx, mul_mat(ctx, test::random_weight(ctx, rng, DType::F32, {31, n}), h),
                    test::random_weight(ctx, rng, DType::F32, {n}));
    SCOPED_TRACE("n = " + std::to_string(n));
    const auto counts = expect_frontend_preserves({rms_norm(ctx, y, 1e-5f)});
    // The matmul -> add -> silu chain is one pattern group; every weight became a load_const.
    EXPECT_EQ(counts.count("tx8be.constant"), 0u);
    EXPECT_EQ(counts.at("tx8be.load_const"), 4);
  }
}

TEST(CompilerPasses, ConvBatchnormReluChainsKeepTheirResults) {
  struct Case {
    int64_t in, out, batch;
  };
  for (const Case c : {Case{3, 32, 1}, Case{32, 31, 2}, Case{33, 64, 1}, Case{64, 128, 1}}) {
    Context ctx;
    Rng rng(unsigned(c.in * 7 + c.out));
    Tensor* image = test::random_input(ctx, rng, DType::F32, {6, 5, c.in, c.batch});
    Conv2dParams conv;
    conv.p0 = conv.p1 = 1;
    Tensor* y = conv_2d(ctx, test::random_weight(ctx, rng, DType::F32, {3, 3, c.in, c.out}), image, conv);
    Tensor* var = test::random_weight(ctx, rng, DType::F32, {c.out}, 0.5f, 2.0f);
    y = relu(ctx, batch_norm(ctx, y, test::random_weight(ctx, rng, DType::F32, {c.out}), var,
                             test::random_weight(ctx, rng, DType::F32, {c.out}),
                             test::random_weight(ctx, rng, DType::F32, {c.out}), 1e-5f));
    Tensor* pooled = pool_2d(ctx, y, Pool2dParams{});
    SCOPED_TRACE("C " + std::to_string(c.in) + " -> " + std::to_string(c.out) + ", N " + std::to_string(c.batch));
    const auto counts = expect_frontend_preserves({pooled, rms_norm(ctx, pooled, 1e-5f)});
    // The NPU-aligned chain meets the compact argument and rmsnorm: conversions stay.
    EXPECT_GT(counts.count("tx8be.channel_norm") ? counts.at("tx8be.channel_norm") : 0, 0);
    EXPECT_GT(counts.at("tx8be.load_var"), 0);
  }
}

TEST(CompilerPasses, RandomGraphsKeepTheirResults) {
  for (uint32_t seed = 200; seed < 220; ++seed) {
    Context ctx;
    SCOPED_TRACE("seed " + std::to_string(seed));
    expect_frontend_preserves(test::random_graph(ctx, seed));
  }
}

TEST(CompilerPasses, LlamaBlockKeepsItsResult) {
  const model::LlamaConfig config = model::llama_preset("tiny");
  const model::BlockConfig block = config.block_config(64, DType::F16, DType::F16);
  Context ctx;
  Rng rng(17);
  const model::BlockWeights weights = model::make_block_weights(ctx, block, 3);
  for (Tensor* t : weights.tensors()) {
    if (t) t->flags |= kFlagParam;
  }
  const model::KvCache cache = model::make_kv_cache(ctx, block);
  test::fill_uniform(*cache.k, rng);
  test::fill_uniform(*cache.v, rng);
  const model::StepInputs step = model::make_step_inputs(ctx, block, 3, 32);
  Tensor* out = model::build_block(ctx, block, weights, cache, step, 32);
  ctx.allocate_all();
  model::fill_step_inputs(step, 4);
  test::fill_uniform(*step.x, rng);
  expect_frontend_preserves({out});
}

// The decode step `tilegraph compile` imports by default: the embedded small model with
// generated f16 weights (seed 42), through the registered --tx8-frontend pipeline: its logits and
// KV-cache writes are the reference's.
TEST(CompilerPasses, EmbeddedDefaultDecodeStepThroughTheFrontendGivesTheReferenceLogits) {
  const model::LlamaConfig config = model::llama_preset("small");
  const model::LlamaModel llama = model::LlamaModel::generate(config, DType::F16, 42);
  const model::BlockConfig block = config.block_config(64, DType::F16, DType::F16);
  Context ctx;
  Rng rng(23);
  std::vector<model::KvCache> caches;
  for (int64_t l = 0; l < config.n_layer; ++l) {
    caches.push_back(model::make_kv_cache(ctx, block));
    test::fill_uniform(*caches.back().k, rng);
    test::fill_uniform(*caches.back().v, rng);
  }
  const model::LlamaStep step = model::build_llama_step(ctx, llama, block, caches, 1, 32, false);
  ctx.allocate_all();
  model::fill_step_inputs(step.inputs, 7);
  static_cast<int32_t*>(step.ids->data)[0] = 123;
  test::CompilerContext c;
  test::CompilerCase cc = test::make_compiler_case(c.context, {step.logits});
  mlir::ModuleOp module = *cc.imported.module;
  ASSERT_EQ(test::run_pipeline(module, "tx8-frontend"), "");
  expect_frontend_form(module);
  EXPECT_GT(count_ops(module, "tx8be.load_var"), 0);
  EXPECT_GT(count_ops(module, "tx8be.load_const"), 0);
  const std::vector<HostTensor> got = interpret(module, cc.inputs, cc.imported.constants);
  // The logits, then each layer's K and V cache writes.
  ASSERT_EQ(got.size(), size_t(1 + 2 * config.n_layer));
  ASSERT_EQ(got[0].elements(), config.n_vocab);
  test::expect_close(got, cc.reference, 0.0, "after --tx8-frontend");
}

TEST(CompilerPasses, MoveConstantRegistersEveryConstantLargeOnesFirst) {
  test::CompilerContext c;
  // One tile: the threshold is 4 KiB. The small bias comes first in program order.
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::parseSourceString<mlir::ModuleOp>(R"mlir(
module attributes {tx8be.tile_dx = 1 : i32, tx8be.tile_dy = 1 : i32} {
  func.func @main(%x: tensor<2x64xf32>) -> tensor<2x32xf32> {
    %b = tx8be.constant {value = dense<1.0> : tensor<1x64xf32>} : tensor<1x64xf32>
    %w = tx8be.constant {value = dense<0.25> : tensor<32x64xf32>} : tensor<32x64xf32>
    %0 = tx8be.add %x, %b : (tensor<2x64xf32>, tensor<1x64xf32>) -> tensor<2x64xf32>
    %1 = tx8be.matmul %w, %0 : (tensor<32x64xf32>, tensor<2x64xf32>) -> tensor<2x32xf32>
    %2 = tx8be.mul %0, %b : (tensor<2x64xf32>, tensor<1x64xf32>) -> tensor<2x64xf32>
    return %1 : tensor<2x32xf32>
  }
}
)mlir",
                                                                                     &c.context);
  ASSERT_TRUE(module);
  tx8be::ConstContainer container;
  mlir::PassManager pm(&c.context);
  pm.addPass(tx8be::createMoveConstantPass(&container));
  ASSERT_TRUE(mlir::succeeded(pm.run(*module)));
  ASSERT_EQ(container.size(), 2u);
  EXPECT_EQ(container.bytes(0), 32u * 64 * 4);  // the large one first
  EXPECT_EQ(container.bytes(1), 64u * 4);
  EXPECT_EQ(container.bytes(1, 3), 64u * 4);    // on every chip
  EXPECT_EQ(container.renumbered().at(0), 1u);  // registered first, moved after
  EXPECT_EQ(container.renumbered().at(1), 0u);
  EXPECT_EQ(container.params(0).front().chip_ids, std::set<int32_t>{tx8be::ConstContainer::kAllChips});
  int loads = 0;
  module->walk([&](tx8be::LoadConstOp load) {
    ++loads;
    const auto type = load.getOutput().getType().cast<mlir::RankedTensorType>();
    EXPECT_EQ(load.getConstMapIdAttr().getInt(), type.getNumElements() == 32 * 64 ? 0 : 1);
    EXPECT_EQ(container.params(uint32_t(load.getConstMapIdAttr().getInt())).front().data, load.getValue());
  });
  EXPECT_EQ(loads, 3);  // one per use
}

TEST(CompilerPasses, GroupPatternsExpandAlternativesAndWildcards) {
  test::CompilerContext c;
  tx8be::PatternTrie trie;
  std::string error;
  ASSERT_TRUE(mlir::succeeded(trie.add("# comment\n\n2: add * | relu exp\n", "p", c.context, error))) << error;
  EXPECT_EQ(trie.patterns(), size_t(tx8be::kMaxWildcardRepeats) + 1);
  const tx8be::PatternTrieNode* node = &trie.root();
  for (int i = 0; i < tx8be::kMaxWildcardRepeats; ++i) {
    node = node->children.at("add").get();
    EXPECT_TRUE(node->terminal());
  }
  EXPECT_TRUE(node->children.empty());  // six adds do not match
  EXPECT_TRUE(mlir::succeeded(trie.add(tx8be::kBuiltinGroupPatterns, "built-in", c.context, error))) << error;
  for (const auto& [text, message] : std::vector<std::pair<std::string, std::string>>{
           {"relu exp", "p:1: expected '<priority>: <op> <op>...'"},
           {"x: relu", "p:1: the priority must be a number of at least 0, got 'x'"},
           {"1: * relu", "p:1: '*' must follow an op name"},
           {"1: relu |", "p:1: an alternative has no ops"},
           {"\n1: relu matmull", "p:2: 'matmull' is not a tx8be op"}}) {
    tx8be::PatternTrie bad;
    EXPECT_TRUE(mlir::failed(bad.add(text, "p", c.context, error)));
    EXPECT_EQ(error, message);
  }
}

}  // namespace
}  // namespace tg::compiler
