// The front-end passes (--tx8-frontend) keep what a module computes. Core graphs (MLPs, conv ->
// batchnorm -> relu -> pool chains, random DAGs, a llama block) are imported, checked against
// the core reference, and interpreted again after each pass, each run on the previous one's
// output. Tolerance 0: the passes only add identities (channel_norm, load_const, load_var,
// store_var) and move ops into groups, so every op still computes with the reference's own code
// on the same operands. After the whole pipeline every compute op sits in a tagged, mapped
// group; the embedded default model's decode step still gives the reference's logits.
#include <gtest/gtest.h>

#include <mlir/IR/MLIRContext.h>
#include <mlir/IR/Verifier.h>
#include <mlir/Parser/Parser.h>
#include <mlir/Pass/PassManager.h>
#include <mlir/Pass/PassRegistry.h>

#include "common/expect_error.h"
#include "common/tensor_utils.h"
#include "compiler/Transforms/GroupPatternTrie.h"
#include "tilegraph/compiler/Dialect/Tx8be/Transforms/Passes.h"
#include "tilegraph/compiler/graph_import.h"
#include "tilegraph/compiler/interpreter.h"
#include "tilegraph/compiler/registration.h"
#include "tilegraph/core/ops.h"
#include "tilegraph/core/reference.h"
#include "tilegraph/model/llama_config.h"
#include "tilegraph/model/llama_model.h"
#include "tilegraph/model/llama_session.h"
#include "tilegraph/model/transformer_block.h"

namespace tg::compiler {
namespace {

using test::Rng;

// --tx8-frontend one pass at a time, as textual pipelines on the module.
constexpr const char* kFrontendSteps[] = {
    "func.func(layout-init)",      "func.func(layout-transmit)",   "func.func(layout-align-to-npu)",
    "func.func(layout-align-opt)", "move-constant",                "const-norm",
    "func.func(group-pattern)",    "func.func(group-optimization)", "func.func(group-ldst)",
    "group-mapping"};

struct Fixture {
  mlir::MLIRContext context;
  Fixture() {
    mlir::DialectRegistry registry;
    register_dialects(registry);
    context.appendDialectRegistry(registry);
    register_passes();
  }
};

std::vector<float> values(const HostTensor& t) { return t.to_f32(); }

void expect_same(const std::vector<HostTensor>& got, const std::vector<std::vector<float>>& expected,
                 const std::string& after) {
  ASSERT_EQ(got.size(), expected.size()) << after;
  for (size_t i = 0; i < got.size(); ++i) {
    const std::vector<float> out = values(got[i]);
    ASSERT_EQ(out.size(), expected[i].size()) << after;
    EXPECT_EQ(test::nmse(out, expected[i]), 0.0)
        << after << ", result " << i << ": " << test::describe_difference(out, expected[i]);
  }
}

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
// after each. Returns the module's op counts by name for the caller's structural checks.
std::map<std::string, int> expect_frontend_preserves(const std::vector<Tensor*>& outputs) {
  Fixture f;
  Graph graph = Graph::build(outputs);
  for (Tensor* t : graph.nodes()) {
    if (t->view_src && !t->data) t->data = static_cast<char*>(t->view_src->data) + t->view_offs;
  }
  ImportedGraph imported = import_graph(f.context, graph);
  std::vector<HostTensor> inputs;
  for (const Tensor* t : imported.arguments) inputs.push_back(HostTensor::from_tensor(*t));
  reference::compute_graph(graph);
  std::vector<std::vector<float>> expected;
  for (const Tensor* t : imported.results) expected.push_back(HostTensor::from_tensor(*t).to_f32());
  expect_same(interpret(*imported.module, inputs, imported.constants), expected, "the import");
  for (const char* step : kFrontendSteps) {
    mlir::PassManager pm(&f.context);
    std::string error;
    llvm::raw_string_ostream errors(error);
    if (mlir::failed(mlir::parsePassPipeline(step, pm, errors))) {
      ADD_FAILURE() << errors.str();
      return {};
    }
    if (mlir::failed(pm.run(*imported.module)) || mlir::failed(mlir::verify(*imported.module))) {
      ADD_FAILURE() << step << " failed";
      return {};
    }
    expect_same(interpret(*imported.module, inputs, imported.constants), expected, std::string("after ") + step);
  }
  expect_frontend_form(*imported.module);
  std::map<std::string, int> counts;
  imported.module->walk([&](mlir::Operation* op) { ++counts[op->getName().getStringRef().str()]; });
  return counts;
}

Tensor* weight(Context& ctx, Rng& rng, DType type, std::initializer_list<int64_t> ne, float lo = -1, float hi = 1) {
  Tensor* t = ctx.new_tensor(type, ne);
  test::fill_uniform(*t, rng, lo, hi);
  t->flags |= kFlagParam;
  return t;
}

Tensor* input(Context& ctx, Rng& rng, DType type, std::initializer_list<int64_t> ne) {
  Tensor* t = ctx.new_tensor(type, ne);
  test::fill_uniform(*t, rng);
  t->flags |= kFlagInput;
  return t;
}

TEST(CompilerPasses, MlpsKeepTheirResults) {
  for (int64_t n : {1, 7, 32, 33, 64, 128}) {
    Context ctx;
    Rng rng(unsigned(n) + 100);
    Tensor* x = input(ctx, rng, DType::F32, {n, 3});
    Tensor* h = silu(ctx, add(ctx, mul_mat(ctx, weight(ctx, rng, DType::F16, {n, 31}), x),
                              weight(ctx, rng, DType::F32, {31})));
    Tensor* y = add(ctx, mul_mat(ctx, weight(ctx, rng, DType::F32, {31, n}), h), weight(ctx, rng, DType::F32, {n}));
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
    Tensor* image = input(ctx, rng, DType::F32, {6, 5, c.in, c.batch});
    Conv2dParams conv;
    conv.p0 = conv.p1 = 1;
    Tensor* y = conv_2d(ctx, weight(ctx, rng, DType::F32, {3, 3, c.in, c.out}), image, conv);
    Tensor* var = weight(ctx, rng, DType::F32, {c.out}, 0.5f, 2.0f);
    y = relu(ctx, batch_norm(ctx, y, weight(ctx, rng, DType::F32, {c.out}), var, weight(ctx, rng, DType::F32, {c.out}),
                             weight(ctx, rng, DType::F32, {c.out}), 1e-5f));
    Tensor* pooled = pool_2d(ctx, y, Pool2dParams{});
    SCOPED_TRACE("C " + std::to_string(c.in) + " -> " + std::to_string(c.out) + ", N " + std::to_string(c.batch));
    const auto counts = expect_frontend_preserves({pooled, rms_norm(ctx, pooled, 1e-5f)});
    // The NPU-aligned chain meets the compact argument and rmsnorm: conversions stay.
    EXPECT_GT(counts.count("tx8be.channel_norm") ? counts.at("tx8be.channel_norm") : 0, 0);
    EXPECT_GT(counts.at("tx8be.load_var"), 0);
  }
}

// A random DAG of elementwise, row, matrix and data-movement ops over [C, T] tensors with C
// around the NPU's channel alignment.
std::vector<Tensor*> random_dag(Context& ctx, Rng& rng) {
  const int64_t sizes[] = {1, 5, 31, 32, 33, 63, 64, 65, 127, 128};
  auto pick = [&](auto& range) { return range[std::uniform_int_distribution<size_t>(0, std::size(range) - 1)(rng)]; };
  std::vector<Tensor*> pool = {input(ctx, rng, DType::F32, {pick(sizes), std::uniform_int_distribution<int64_t>(1, 3)(rng)})};
  const UnaryOp unaries[] = {UnaryOp::RELU, UnaryOp::SILU, UnaryOp::TANH, UnaryOp::NEG, UnaryOp::ABS, UnaryOp::SIGMOID,
                             UnaryOp::GELU};
  const int steps = std::uniform_int_distribution<int>(6, 14)(rng);
  for (int s = 0; s < steps; ++s) {
    Tensor* a = pool[std::uniform_int_distribution<size_t>(0, pool.size() - 1)(rng)];
    std::vector<Tensor*> same;
    for (Tensor* t : pool) {
      if (t->ne[0] == a->ne[0] && t->ne[1] == a->ne[1]) same.push_back(t);
    }
    Tensor* b = same[std::uniform_int_distribution<size_t>(0, same.size() - 1)(rng)];
    Tensor* r = nullptr;
    switch (std::uniform_int_distribution<int>(0, 9)(rng)) {
      case 0: r = unary(ctx, a, pick(unaries)); break;
      case 1: r = add(ctx, a, b); break;
      case 2: r = mul(ctx, a, b); break;
      case 3: r = sub(ctx, a, weight(ctx, rng, DType::F32, {a->ne[0]})); break;
      case 4: r = scale(ctx, a, 0.5f, 0.25f); break;
      case 5: r = rms_norm(ctx, a, 1e-5f); break;
      case 6: r = soft_max(ctx, a, nullptr, 0.7f); break;
      case 7: r = mul_mat(ctx, weight(ctx, rng, DType::F16, {a->ne[0], pick(sizes)}), a); break;
      case 8: r = cont(ctx, transpose(ctx, a)); break;
      default: r = a->ne[1] == b->ne[1] ? concat(ctx, a, b, 0) : norm(ctx, a, 1e-5f); break;
    }
    pool.push_back(r);
  }
  return {pool.back(), pool[pool.size() / 2], pool[pool.size() - 2]};
}

TEST(CompilerPasses, RandomDagsKeepTheirResults) {
  for (unsigned seed = 0; seed < 12; ++seed) {
    Context ctx;
    Rng rng(seed);
    std::vector<Tensor*> outputs = random_dag(ctx, rng);
    SCOPED_TRACE("seed " + std::to_string(seed));
    expect_frontend_preserves(outputs);
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
// generated f16 weights (seed 42), through the registered --tx8-frontend pipeline.
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
  Fixture f;
  Graph graph = Graph::build(step.logits);
  for (Tensor* t : graph.nodes()) {
    if (t->view_src && !t->data) t->data = static_cast<char*>(t->view_src->data) + t->view_offs;
  }
  ImportedGraph imported = import_graph(f.context, graph);
  std::vector<HostTensor> inputs;
  for (const Tensor* t : imported.arguments) inputs.push_back(HostTensor::from_tensor(*t));
  mlir::PassManager pm(&f.context);
  std::string error;
  llvm::raw_string_ostream errors(error);
  ASSERT_TRUE(mlir::succeeded(mlir::parsePassPipeline("tx8-frontend", pm, errors))) << errors.str();
  ASSERT_TRUE(mlir::succeeded(pm.run(*imported.module)));
  ASSERT_TRUE(mlir::succeeded(mlir::verify(*imported.module)));
  expect_frontend_form(*imported.module);
  EXPECT_GT(count_ops(*imported.module, "tx8be.load_var"), 0);
  const std::vector<HostTensor> got = interpret(*imported.module, inputs, imported.constants);
  reference::compute_graph(graph);
  const std::vector<float> logits = HostTensor::from_tensor(*step.logits).to_f32();
  ASSERT_FALSE(got.empty());
  const std::vector<float> out = got[0].to_f32();
  ASSERT_EQ(out.size(), size_t(config.n_vocab));
  EXPECT_EQ(test::nmse(out, logits), 0.0) << test::describe_difference(out, logits);
}

TEST(CompilerPasses, MoveConstantRegistersEveryConstantLargeOnesFirst) {
  Fixture f;
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
)mlir", &f.context);
  ASSERT_TRUE(module);
  tx8be::ConstContainer container;
  mlir::PassManager pm(&f.context);
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
  Fixture f;
  f.context.getOrLoadDialect<tx8be::Tx8beDialect>();
  tx8be::PatternTrie trie;
  std::string error;
  ASSERT_TRUE(mlir::succeeded(trie.add("# comment\n\n2: add * | relu exp\n", "p", f.context, error))) << error;
  EXPECT_EQ(trie.patterns(), size_t(tx8be::kMaxWildcardRepeats) + 1);
  const tx8be::PatternTrieNode* node = &trie.root();
  for (int i = 0; i < tx8be::kMaxWildcardRepeats; ++i) {
    node = node->children.at("add").get();
    EXPECT_TRUE(node->terminal());
  }
  EXPECT_TRUE(node->children.empty());  // six adds do not match
  EXPECT_TRUE(mlir::succeeded(trie.add(tx8be::kBuiltinGroupPatterns, "built-in", f.context, error))) << error;
  for (const auto& [text, message] : std::vector<std::pair<std::string, std::string>>{
           {"relu exp", "p:1: expected '<priority>: <op> <op>...'"},
           {"x: relu", "p:1: the priority must be a number of at least 0, got 'x'"},
           {"1: * relu", "p:1: '*' must follow an op name"},
           {"1: relu |", "p:1: an alternative has no ops"},
           {"\n1: relu matmull", "p:2: 'matmull' is not a tx8be op"}}) {
    tx8be::PatternTrie bad;
    EXPECT_TRUE(mlir::failed(bad.add(text, "p", f.context, error)));
    EXPECT_EQ(error, message);
  }
}

}  // namespace
}  // namespace tg::compiler
