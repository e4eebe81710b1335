// The CNN ops' tile programs (conv2d, batchnorm_inference, pool2d: tile_program_cnn.h over the
// op library's op_conv2d, op_batchnorm_inference and op_pool2d) compiled with compile_graph and
// run on the C-model against the core reference: each op on random shapes around the edge sizes
// (1, primes, channel counts 31-33, 63-65, 127-129, kernels 1/3/5, strides 1/2, padding 0/1), the
// TX8 toolchain's BatchNorm example (conv -> batchnorm -> relu) and a LeNet-size CNN on 1x1 and 2x2
// meshes. Every run also checks the chip's schedule for data hazards and every group's SPM peak
// against its lower bound (at most 1.05x, CompileReport's GroupReport).
//
// Tolerance (nmse against the reference, f32): 1e-10. The NE accumulates the convolution in f32
// in its own order and the CGRA's rsqrt and average differ from the reference's double sums and
// libm in the last bits; nothing is rounded to a narrower format.
#include <gtest/gtest.h>

#include <random>

#include "chip_run.h"
#include "common/tensor_utils.h"
#include "compiler_case.h"
#include "random_graph.h"
#include "tilegraph/compiler/chip_program.h"
#include "tilegraph/core/ops.h"

namespace tg::compiler {
namespace {

using test::mesh;
using test::Rng;

constexpr double kF32Tolerance = 1e-10;

// Runs the graph of `outputs` on the chip: the reference's results, no hazard, every group's SPM
// peak within 1.05x of its lower bound, and every node on the chip (no CPU fallback hides a
// refusal).
void expect_runs_on_chip(const std::vector<Tensor*>& outputs, const sim::ChipConfig& config = mesh(2, 2)) {
  const Graph graph = Graph::build(outputs);
  for (const Tensor* node : graph.nodes()) {
    std::string why;
    ASSERT_TRUE(chip_supports(*node, &why)) << op_name(node->op) << ": " << why;
  }
  test::CompilerContext c;
  const test::CompilerCase cc = test::make_compiler_case(c.context, outputs);
  const test::ChipRun run = test::run_on_chip(outputs, cc, config);
  test::expect_close(run.results, cc.reference, kF32Tolerance);
  EXPECT_EQ(run.report.hazard_count, 0u) << (run.report.hazards.empty() ? "" : run.report.hazards[0]);
  EXPECT_GT(run.report.total_cycles, 0u);
  for (const GroupReport& group : run.compile.groups) {
    if (group.spm_lower_bound == 0) continue;  // a group in DDR
    EXPECT_LE(double(group.spm_peak), 1.05 * double(group.spm_lower_bound))
        << "group " << group.group_id << " (" << group.ops << "): peak " << group.spm_peak << ", lower bound "
        << group.spm_lower_bound;
  }
}

// A batchnorm's variance: positive.
Tensor* random_variance(Context& ctx, Rng& rng, int64_t channels) {
  Tensor* var = ctx.new_tensor(DType::F32, {channels});
  test::fill_uniform(*var, rng, 0.5f, 2.0f);
  var->flags |= kFlagParam;
  return var;
}

Tensor* batchnorm(Context& ctx, Rng& rng, Tensor* x, int64_t channels, int axis = 2) {
  Tensor* mean = test::random_weight(ctx, rng, DType::F32, {channels});
  Tensor* gamma = test::random_weight(ctx, rng, DType::F32, {channels});
  Tensor* beta = test::random_weight(ctx, rng, DType::F32, {channels});
  return batch_norm(ctx, x, mean, random_variance(ctx, rng, channels), gamma, beta, 1e-5f, axis);
}

constexpr int64_t kChannels[] = {1, 3, 31, 32, 33, 63, 64, 65, 127, 128, 129};
constexpr int64_t kSizes[] = {1, 2, 5, 7, 13};

TEST(CompilerCodegenCnn, Conv2dOnRandomShapes) {
  Rng rng(11);
  int ran = 0;
  for (int i = 0; ran < 8; ++i) {
    const int64_t cin = kChannels[size_t(i) % 11], cout = kChannels[size_t(i * 7 + 3) % 11];
    const int32_t k = std::array{1, 3, 5}[size_t(i) % 3];
    Conv2dParams p;
    p.s0 = int32_t(1 + rng() % 2);
    p.s1 = int32_t(1 + rng() % 2);
    p.p0 = int32_t(rng() % 2);
    p.p1 = int32_t(rng() % 2);
    p.d0 = p.d1 = i % 5 == 4 ? 2 : 1;
    const int64_t w = kSizes[rng() % 5], h = kSizes[rng() % 5], n = 1 + i % 2;
    if (w + 2 * p.p0 < p.d0 * (k - 1) + 1 || h + 2 * p.p1 < p.d1 * (k - 1) + 1) continue;
    ++ran;
    SCOPED_TRACE("image " + std::to_string(w) + "x" + std::to_string(h) + "x" + std::to_string(cin) + "x" +
                 std::to_string(n) + ", kernel " + std::to_string(k) + " to " + std::to_string(cout) + ", stride " +
                 std::to_string(p.s0) + "x" + std::to_string(p.s1) + ", pad " + std::to_string(p.p0) + "x" +
                 std::to_string(p.p1) + ", dilation " + std::to_string(p.d0));
    Context ctx;
    Tensor* image = test::random_input(ctx, rng, DType::F32, {w, h, cin, n});
    Tensor* kernel = test::random_weight(ctx, rng, DType::F32, {k, k, cin, cout});
    expect_runs_on_chip({conv_2d(ctx, kernel, image, p)});
  }
}

// Batchnorm over NCHW's C (core axis 2) and over the innermost dimension (axis 0).
TEST(CompilerCodegenCnn, BatchnormOnRandomShapes) {
  Rng rng(12);
  for (int i = 0; i < 6; ++i) {
    const int64_t c = kChannels[size_t(2 * i)], w = kSizes[rng() % 5], h = kSizes[rng() % 5], n = 1 + i % 2;
    SCOPED_TRACE("C " + std::to_string(c) + ", " + std::to_string(w) + "x" + std::to_string(h) + "x" +
                 std::to_string(n));
    Context ctx;
    Tensor* image = test::random_input(ctx, rng, DType::F32, {w, h, c, n});
    Tensor* rows = test::random_input(ctx, rng, DType::F32, {c, w, h, n});
    expect_runs_on_chip({batchnorm(ctx, rng, image, c), batchnorm(ctx, rng, rows, c, 0)});
  }
}

// A batchnorm larger than a tile's SPM walks its range in steps, the per-channel constants loaded
// once for all of them (the variance copied before the op overwrites it).
TEST(CompilerCodegenCnn, BatchnormInSteps) {
  Context ctx;
  Rng rng(14);
  Tensor* image = test::random_input(ctx, rng, DType::F32, {96, 96, 65, 2});
  const std::vector<Tensor*> outputs = {batchnorm(ctx, rng, image, 65)};
  test::CompilerContext c;
  const test::CompilerCase cc = test::make_compiler_case(c.context, outputs);
  const test::ChipRun run = test::run_on_chip(outputs, cc, mesh(1, 1));
  test::expect_close(run.results, cc.reference, kF32Tolerance);
  EXPECT_EQ(run.report.hazard_count, 0u) << (run.report.hazards.empty() ? "" : run.report.hazards[0]);
  int64_t steps = 0;
  for (const GroupReport& group : run.compile.groups) {
    if (group.ops == "batchnorm_inference") steps = group.steps;
  }
  EXPECT_GT(steps, 1);
}

TEST(CompilerCodegenCnn, PoolOnRandomShapes) {
  Rng rng(13);
  int ran = 0;
  for (int i = 0; ran < 8; ++i) {
    Pool2dParams p;
    p.op = i % 2 ? PoolOp::AVG : PoolOp::MAX;
    p.k0 = std::array{1, 2, 3, 5}[rng() % 4];
    p.k1 = std::array{1, 2, 3, 5}[rng() % 4];
    p.s0 = int32_t(1 + rng() % 2);
    p.s1 = int32_t(1 + rng() % 2);
    p.p0 = p.k0 > 1 ? int32_t(rng() % 2) : 0;
    p.p1 = p.k1 > 1 ? int32_t(rng() % 2) : 0;
    const int64_t c = kChannels[size_t(3 * i) % 11], w = kSizes[rng() % 5], h = kSizes[rng() % 5], n = 1 + i % 2;
    if (w + 2 * p.p0 < p.k0 || h + 2 * p.p1 < p.k1) continue;
    ++ran;
    SCOPED_TRACE(std::string(p.op == PoolOp::MAX ? "max " : "avg ") + std::to_string(w) + "x" + std::to_string(h) +
                 "x" + std::to_string(c) + "x" + std::to_string(n) + ", window " + std::to_string(p.k0) + "x" +
                 std::to_string(p.k1) + ", stride " + std::to_string(p.s0) + "x" + std::to_string(p.s1) + ", pad " +
                 std::to_string(p.p0) + "x" + std::to_string(p.p1));
    Context ctx;
    expect_runs_on_chip({pool_2d(ctx, test::random_input(ctx, rng, DType::F32, {w, h, c, n}), p)});
  }
}

// The TX8 toolchain's BatchNorm example: a convolution, its batch norm, relu.
TEST(CompilerCodegenCnn, ConvBatchnormReluRunsOnTheChip) {
  for (int m : {1, 2}) {
    for (int64_t channels : {3, 65}) {
      SCOPED_TRACE("mesh " + std::to_string(m) + "x" + std::to_string(m) + ", C " + std::to_string(channels));
      Context ctx;
      Rng rng(unsigned(channels) + 21);
      Tensor* image = test::random_input(ctx, rng, DType::F32, {17, 11, channels, 2});
      Tensor* kernel = test::random_weight(ctx, rng, DType::F32, {3, 3, channels, 16});
      Conv2dParams conv;
      conv.p0 = conv.p1 = 1;
      Tensor* y = unary(ctx, batchnorm(ctx, rng, conv_2d(ctx, kernel, image, conv), 16), UnaryOp::RELU);
      expect_runs_on_chip({y}, mesh(m, m));
    }
  }
}

// LeNet-5's shape: 32x32x1 -> conv 5x5 to 6 -> relu -> max pool 2 -> conv 5x5 to 16 -> relu ->
// max pool 2 -> 400 -> matmul to 120 (+ bias) -> relu -> matmul to 10.
TEST(CompilerCodegenCnn, LenetRunsOnTheChip) {
  for (auto [m, batch] : {std::pair{1, int64_t(1)}, {2, int64_t(3)}}) {
    SCOPED_TRACE("mesh " + std::to_string(m) + "x" + std::to_string(m) + ", batch " + std::to_string(batch));
    Context ctx;
    Rng rng(unsigned(batch) + 31);
    Tensor* image = test::random_input(ctx, rng, DType::F32, {32, 32, 1, batch});
    Tensor* k1 = test::random_weight(ctx, rng, DType::F32, {5, 5, 1, 6});
    Tensor* k2 = test::random_weight(ctx, rng, DType::F32, {5, 5, 6, 16}, -0.2f, 0.2f);
    Tensor* w1 = test::random_weight(ctx, rng, DType::F32, {400, 120}, -0.1f, 0.1f);
    Tensor* b1 = test::random_weight(ctx, rng, DType::F32, {120});
    Tensor* w2 = test::random_weight(ctx, rng, DType::F32, {120, 10}, -0.1f, 0.1f);
    Pool2dParams pool;  // max 2x2, stride 2
    Tensor* x = pool_2d(ctx, unary(ctx, conv_2d(ctx, k1, image), UnaryOp::RELU), pool);
    x = pool_2d(ctx, unary(ctx, conv_2d(ctx, k2, x), UnaryOp::RELU), pool);
    x = reshape(ctx, x, {400, batch});
    x = unary(ctx, add(ctx, mul_mat(ctx, w1, x), b1), UnaryOp::RELU);
    expect_runs_on_chip({mul_mat(ctx, w2, x)}, mesh(m, m));
  }
}

TEST(CompilerCodegenCnn, ChipSupportsSaysWhyNot) {
  Context ctx;
  Rng rng(5);
  Tensor* image = test::random_input(ctx, rng, DType::F32, {8, 8, 4, 1});
  Tensor* f16_kernel = test::random_weight(ctx, rng, DType::F16, {3, 3, 4, 8});
  std::string why;
  EXPECT_FALSE(chip_supports(*conv_2d(ctx, f16_kernel, image), &why));
  EXPECT_NE(why.find("f16 kernel"), std::string::npos) << why;
  EXPECT_FALSE(chip_supports(*batchnorm(ctx, rng, image, 8, 1), &why));
  EXPECT_NE(why.find("axis 1"), std::string::npos) << why;
  EXPECT_TRUE(chip_supports(*batchnorm(ctx, rng, image, 4), &why)) << why;
  EXPECT_TRUE(chip_supports(*pool_2d(ctx, image, Pool2dParams{}), &why)) << why;
}

}  // namespace
}  // namespace tg::compiler
