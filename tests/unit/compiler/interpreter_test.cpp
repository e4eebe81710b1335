// The importer and the interpreter against the core reference: a core graph imported into tx8be
// and interpreted gives what reference::compute_graph gives, for random small graphs of every
// imported op kind and for a llama decode step (its logits and its KV-cache writes).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>

#include <mlir/IR/MLIRContext.h>
#include <mlir/Parser/Parser.h>

#include "common/expect_error.h"
#include "common/tensor_utils.h"
#include "compiler_case.h"
#include "random_graph.h"
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

// Interprets the import of the graph of `outputs` and compares with the reference, to within
// `tolerance` (nmse).
void expect_matches_reference(const std::vector<Tensor*>& outputs, double tolerance = 0.0,
                              const ImportOptions& options = {}) {
  test::CompilerContext c;
  const test::CompilerCase cc = test::make_compiler_case(c.context, outputs, options);
  test::expect_close(interpret(*cc.imported.module, cc.inputs, cc.imported.constants), cc.reference, tolerance);
}

TEST(CompilerInterpreter, MlpWithEveryActivationMatchesTheReference) {
  // Sizes around the NPU's channel alignment (32, 64, 128), a prime, and one.
  for (int64_t n : {1, 7, 31, 64, 129}) {
    Context ctx;
    Rng rng{unsigned(n)};
    Tensor* x = test::random_input(ctx, rng, DType::F32, {n, 3});
    Tensor* w1 = test::random_weight(ctx, rng, DType::F16, {n, 32});
    Tensor* b1 = test::random_weight(ctx, rng, DType::F32, {32});
    Tensor* h = add(ctx, mul_mat(ctx, w1, x), b1);
    std::vector<Tensor*> outs;
    for (int op = 0; op < kUnaryOpCount; ++op) {
      const auto unary_op = UnaryOp(op);
      // sqrt and rsqrt of a positive argument.
      Tensor* arg = unary_op == UnaryOp::SQRT || unary_op == UnaryOp::RSQRT ? unary(ctx, h, UnaryOp::ABS) : h;
      outs.push_back(unary(ctx, arg, unary_op));
    }
    outs.push_back(scale(ctx, div(ctx, sub(ctx, h, b1), add(ctx, unary(ctx, b1, UnaryOp::ABS), b1)), 0.5f, 2.0f));
    SCOPED_TRACE("n = " + std::to_string(n));
    expect_matches_reference(outs);
  }
}

TEST(CompilerInterpreter, ConvBatchnormReluPoolMatchesTheReference) {
  for (int64_t channels : {3, 32, 64}) {
    Context ctx;
    Rng rng(unsigned(channels) + 7);
    Tensor* image = test::random_input(ctx, rng, DType::F32, {9, 7, channels, 2});
    Tensor* kernel = test::random_weight(ctx, rng, DType::F32, {3, 3, channels, 16});
    Conv2dParams conv;
    conv.s0 = 2;
    conv.p0 = conv.p1 = 1;
    Tensor* y = conv_2d(ctx, kernel, image, conv);
    Tensor* mean = test::random_weight(ctx, rng, DType::F32, {16});
    Tensor* var = ctx.new_tensor(DType::F32, {16});
    test::fill_uniform(*var, rng, 0.5f, 2.0f);
    var->flags |= kFlagParam;
    Tensor* gamma = test::random_weight(ctx, rng, DType::F32, {16});
    y = relu(ctx, batch_norm(ctx, y, mean, var, gamma, nullptr, 1e-5f));
    Pool2dParams pool;
    Tensor* pooled = pool_2d(ctx, y, pool);
    pool.op = PoolOp::AVG;
    Tensor* averaged = pool_2d(ctx, y, pool);
    SCOPED_TRACE("channels = " + std::to_string(channels));
    expect_matches_reference({pooled, concat(ctx, pooled, averaged, 2)});
  }
}

TEST(CompilerInterpreter, RowOpsViewsAndPermutesMatchTheReference) {
  Context ctx;
  Rng rng(3);
  Tensor* x = test::random_input(ctx, rng, DType::F32, {16, 5, 3});
  Tensor* mask = test::random_input(ctx, rng, DType::F32, {16, 5});
  std::vector<Tensor*> outs = {
      rms_norm(ctx, x, 1e-5f),
      norm(ctx, x, 1e-5f),
      soft_max(ctx, x, mask, 0.5f),
      cont(ctx, permute(ctx, x, 2, 0, 1, 3)),
      cont(ctx, transpose(ctx, x)),
      reshape(ctx, x, {80, 3}),
      cont(ctx, view_2d(ctx, x, 4, 6, x->nb[1], 2 * x->nb[0])),
      sum_rows(ctx, x),
      argmax(ctx, reshape(ctx, x, {16, 15})),
      swiglu(ctx, x, test::random_input(ctx, rng, DType::F32, {16, 5, 3})),
      glu(ctx, x, GluOp::GEGLU, true),
      get_rows(ctx, test::random_weight(ctx, rng, DType::F16, {16, 10}),
               test::random_input(ctx, rng, DType::I32, {4}, 0, 10)),
  };
  expect_matches_reference(outs);
}

TEST(CompilerInterpreter, RandomGraphsMatchTheReference) {
  for (uint32_t seed = 1; seed <= 60; ++seed) {
    Context ctx;
    const std::vector<Tensor*> outputs = test::random_graph(ctx, seed);
    SCOPED_TRACE("seed " + std::to_string(seed));
    expect_matches_reference(outputs);
  }
}

TEST(CompilerInterpreter, LargeAndQuantizedWeightsStayOutsideTheIr) {
  Context ctx;
  Rng rng(11);
  Tensor* x = test::random_input(ctx, rng, DType::F32, {64, 2});
  Tensor* q = test::random_weight(ctx, rng, DType::Q8_0, {64, 48});
  Tensor* big = test::random_weight(ctx, rng, DType::F32, {64, 48});
  Tensor* out = add(ctx, mul_mat(ctx, q, x), mul_mat(ctx, big, x));
  ImportOptions options;
  options.inline_limit_bytes = 1024;
  test::CompilerContext f;
  ImportedGraph imported = import_graph(f.context, Graph::build(out), options);
  EXPECT_EQ(imported.constants.size(), 2u);
  expect_matches_reference({out}, 0.0, options);
}

TEST(CompilerInterpreter, RefusesMissingOrChangedExternalData) {
  Context ctx;
  Rng rng(5);
  Tensor* x = test::random_input(ctx, rng, DType::F32, {32, 1});
  Tensor* w = test::random_weight(ctx, rng, DType::Q8_0, {32, 4});
  w->set_name("w");
  test::CompilerContext f;
  ImportedGraph imported = import_graph(f.context, Graph::build(mul_mat(ctx, w, x)));
  const std::vector<HostTensor> inputs = {HostTensor::from_tensor(*x)};
  test::expect_error([&] { interpret(*imported.module, inputs); }, "no data for 'w'");
  ConstantData other;
  const HostTensor zeros = HostTensor::zeros(DType::Q8_0, {4, 32});
  other.add("w", zeros);
  test::expect_error([&] { interpret(*imported.module, inputs, other); }, "'w' holds other data");
  test::expect_error([&] { interpret(*imported.module, {}, imported.constants); }, "takes 1 arguments, 0 given");
}

// A llama step as the session builds it (build_llama_step), over caches holding earlier
// positions: the interpreted logits and KV-cache writes match the reference.
void expect_llama_step_matches(int64_t n_tokens, int64_t n_past, bool all_logits) {
  const model::LlamaConfig config = model::llama_preset("tiny");
  const model::LlamaModel llama = model::LlamaModel::generate(config, DType::F16, 1);
  const int64_t n_ctx = 64, n_kv = 32;
  const model::BlockConfig block = config.block_config(n_ctx, DType::F16, DType::F16);
  Context ctx;
  Rng rng(9);
  std::vector<model::KvCache> caches;
  for (int64_t l = 0; l < config.n_layer; ++l) {
    caches.push_back(model::make_kv_cache(ctx, block));
    test::fill_uniform(*caches.back().k, rng);
    test::fill_uniform(*caches.back().v, rng);
  }
  const model::LlamaStep step = model::build_llama_step(ctx, llama, block, caches, n_tokens, n_kv, all_logits);
  ctx.allocate_all();
  model::fill_step_inputs(step.inputs, n_past);
  for (int64_t i = 0; i < n_tokens; ++i) static_cast<int32_t*>(step.ids->data)[i] = int32_t(40 + 7 * i);
  // Bit-identical: the interpreter computes each op with the reference's own code.
  expect_matches_reference({step.logits}, 0.0);
}

TEST(CompilerInterpreter, LlamaDecodeStepGivesTheReferenceLogitsAndCacheWrites) {
  expect_llama_step_matches(1, 5, false);
}

TEST(CompilerInterpreter, LlamaPrefillStepGivesTheReferenceLogits) {
  expect_llama_step_matches(6, 0, false);  // the last token's logits through a view
  expect_llama_step_matches(3, 2, true);
}

TEST(CompilerImport, PrintedModuleParsesBack) {
  Context ctx;
  Rng rng(1);
  Tensor* x = test::random_input(ctx, rng, DType::F32, {32, 2});
  Tensor* out = silu(ctx, mul_mat(ctx, test::random_weight(ctx, rng, DType::Q8_0, {32, 8}), x));
  test::CompilerContext f;
  ImportedGraph imported = import_graph(f.context, Graph::build(out));
  std::string text;
  llvm::raw_string_ostream stream(text);
  imported.module->print(stream);
  mlir::OwningOpRef<mlir::ModuleOp> parsed = mlir::parseSourceString<mlir::ModuleOp>(stream.str(), &f.context);
  ASSERT_TRUE(parsed);
  const std::vector<HostTensor> inputs = {HostTensor::from_tensor(*x)};
  const std::vector<HostTensor> a = interpret(*imported.module, inputs, imported.constants);
  const std::vector<HostTensor> b = interpret(*parsed, inputs, imported.constants);
  EXPECT_EQ(a[0].to_f32(), b[0].to_f32());
}

}  // namespace
}  // namespace tg::compiler
