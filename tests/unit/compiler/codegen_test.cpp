// Code generation and the program runner against the core reference: core graphs compiled with
// compile_graph (import, front end, plan, tx8-codegen, JIT) and run on the C-model give what
// reference::compute_graph gives, with no data hazard on the chip's schedule.
//
// Tolerance (nmse against the reference): f32 graphs 1e-10 (the CGRA computes in f32 and rounds
// once, its transcendental functions and the NE's f32 accumulation differ from the reference's
// libm and double sums in the last bits).
#include <gtest/gtest.h>
#include "chip_run.h"
#include "common/tensor_utils.h"
#include "compiler_case.h"
#include "random_graph.h"
#include "tilegraph/compiler/chip_program.h"
#include "tilegraph/core/ops.h"

namespace tg::compiler {
namespace {

using test::expect_chip_matches_reference;
using test::mesh;
using test::Rng;

constexpr double kF32Tolerance = 1e-10;

TEST(CompilerCodegen, MlpRunsOnTheChip) {
  for (int64_t n : {1, 7, 32, 64, 129}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    Context ctx;
    Rng rng{unsigned(n)};
    Tensor* x = test::random_input(ctx, rng, DType::F32, {n, 3});
    Tensor* w1 = test::random_weight(ctx, rng, DType::F32, {n, 32});
    Tensor* b1 = test::random_weight(ctx, rng, DType::F32, {32});
    Tensor* w2 = test::random_weight(ctx, rng, DType::F32, {32, 5});
    Tensor* h = unary(ctx, add(ctx, mul_mat(ctx, w1, x), b1), UnaryOp::RELU);
    Tensor* y = rms_norm(ctx, mul_mat(ctx, w2, h), 1e-5f);
    expect_chip_matches_reference({y}, kF32Tolerance);
  }
}

TEST(CompilerCodegen, RowOpsAndActivationsRunOnTheChip) {
  for (int64_t c : {1, 31, 64, 129}) {
    SCOPED_TRACE("c = " + std::to_string(c));
    Context ctx;
    Rng rng{unsigned(c) + 100};
    Tensor* x = test::random_input(ctx, rng, DType::F32, {c, 5, 2});
    Tensor* row = test::random_weight(ctx, rng, DType::F32, {c});
    Tensor* gate = test::random_input(ctx, rng, DType::F32, {c, 5, 2});
    std::vector<Tensor*> outs;
    outs.push_back(soft_max(ctx, scale(ctx, x, 0.5f, 0.25f)));
    outs.push_back(norm(ctx, mul(ctx, x, row), 1e-5f));
    outs.push_back(swiglu(ctx, x, gate));
    for (UnaryOp op : {UnaryOp::GELU, UnaryOp::SILU, UnaryOp::SIGMOID, UnaryOp::TANH, UnaryOp::EXP, UnaryOp::NEG}) {
      outs.push_back(unary(ctx, sub(ctx, x, row), op));
    }
    expect_chip_matches_reference(outs, kF32Tolerance);
  }
}

// The same graph on 1x1, 2x2 and 4x4 meshes: the data split differs, the results do not.
TEST(CompilerCodegen, MeshSizesGiveTheSameResults) {
  for (int m : {1, 2, 4}) {
    SCOPED_TRACE("mesh " + std::to_string(m) + "x" + std::to_string(m));
    Context ctx;
    Rng rng{7};
    Tensor* x = test::random_input(ctx, rng, DType::F32, {48, 37});
    Tensor* w = test::random_weight(ctx, rng, DType::F32, {48, 65});
    Tensor* y = rms_norm(ctx, unary(ctx, mul_mat(ctx, w, x), UnaryOp::SILU), 1e-6f);
    expect_chip_matches_reference({y}, kF32Tolerance, mesh(m, m));
  }
}

// Random DAGs of the imported ops (random_graph.h) whose every node the chip supports.
TEST(CompilerCodegen, RandomGraphsOfSupportedOpsRunOnTheChip) {
  int ran = 0;
  for (uint32_t seed = 1; seed <= 40 && ran < 6; ++seed) {
    Context ctx;
    const std::vector<Tensor*> outputs = test::random_graph(ctx, seed);
    if (!test::chip_runs_whole(outputs)) continue;
    SCOPED_TRACE("seed " + std::to_string(seed));
    expect_chip_matches_reference(outputs, kF32Tolerance);
    ++ran;
  }
  EXPECT_GE(ran, 3);
}

TEST(CompilerCodegen, ChipSupportsSaysWhyNot) {
  Context ctx;
  Rng rng{3};
  Tensor* x = test::random_input(ctx, rng, DType::F32, {32, 4});
  Tensor* q = test::random_weight(ctx, rng, DType::Q4_0, {32, 8});
  std::string why;
  EXPECT_FALSE(chip_supports(*mul_mat(ctx, q, x), &why));
  EXPECT_NE(why.find("block-quantized"), std::string::npos) << why;
  EXPECT_FALSE(chip_supports(*unary(ctx, x, UnaryOp::GELU_ERF), &why));
  EXPECT_NE(why.find("gelu_erf"), std::string::npos) << why;
  EXPECT_TRUE(chip_supports(*unary(ctx, x, UnaryOp::RELU), &why));
}

}  // namespace
}  // namespace tg::compiler
