// mul_mat on the chip against the core reference: weights of another type than the activations
// (f16 / bf16 weights, f32 activations, rounded to the weights' type on the CGRA before the NE
// GEMM) and q8_0 weights on the NE's int8 path (op_gemm_q8_0), on shapes around the NE's and the
// q8_0 block's sizes (1, primes, 31..33, 63..65, 127..129, K not a multiple of 16 or 32).
//
// Tolerances (nmse against reference::compute_graph):
//   bf16 weights  1e-10: the reference rounds the activations to bf16 as the chip does (nearest
//                 even); only the chip's f32 sums differ from the reference's double ones.
//   f16 weights   1e-6: the chip rounds the activations to f16 (as upstream ggml does: f16 is its
//                 f16 vec_dot's type), the reference (and src/cpu) keep them f32; a relative
//                 rounding error of at most 2^-11 per activation gives an nmse of about 3.5e-8. Activations that are
//                 f16 values already give the reference's result to 1e-10.
//   q8_0 weights  1e-10: chip and reference quantize the activations per 32-block by the same
//                 rule (q8_32) and multiply the same integers; the scales' products and the
//                 f32 sums differ in the last bits.
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "chip_run.h"
#include "common/tensor_utils.h"
#include "compiler_case.h"
#include "random_graph.h"
#include "tilegraph/compiler/chip_program.h"
#include "tilegraph/core/dtype.h"
#include "tilegraph/core/ops.h"

namespace tg::compiler {
namespace {

using test::expect_chip_matches_reference;
using test::mesh;
using test::Rng;

// (K, weight rows M, activation rows N)
using Shape = std::tuple<int64_t, int64_t, int64_t>;

// One mul_mat per shape, weights of `type`, f32 activations, in one graph.
std::vector<Tensor*> matmuls(Context& ctx, Rng& rng, DType type, const std::vector<Shape>& shapes) {
  std::vector<Tensor*> outs;
  for (const auto& [k, m, n] : shapes) {
    Tensor* w = test::random_weight(ctx, rng, type, {k, m});
    Tensor* x = test::random_input(ctx, rng, DType::F32, {k, n});
    outs.push_back(mul_mat(ctx, w, x));
  }
  return outs;
}

TEST(CompilerCodegenMatmul, F16WeightsTimesF32Activations) {
  const std::vector<Shape> shapes{{33, 65, 7}, {129, 31, 1}, {1, 127, 3}, {64, 32, 63}};
  Context ctx;
  Rng rng{11};
  expect_chip_matches_reference(matmuls(ctx, rng, DType::F16, shapes), 1e-6);
}

TEST(CompilerCodegenMatmul, Bf16WeightsTimesF32Activations) {
  const std::vector<Shape> shapes{{63, 129, 5}, {128, 1, 13}, {31, 64, 1}};
  Context ctx;
  Rng rng{12};
  expect_chip_matches_reference(matmuls(ctx, rng, DType::BF16, shapes), 1e-10);
}

// Activations that are f16 values already: rounding them changes nothing, so the chip gives the
// reference's result up to its f32 sums.
TEST(CompilerCodegenMatmul, F16RoundingIsNearestEvenAndExactOnF16Values) {
  Context ctx;
  Rng rng{13};
  Tensor* w = test::random_weight(ctx, rng, DType::F16, {65, 33});
  Tensor* x = test::random_input(ctx, rng, DType::F32, {65, 17});
  float* data = static_cast<float*>(x->data);
  for (int64_t i = 0; i < 65 * 17; ++i) data[i] = f16_to_f32(f32_to_f16(data[i]));
  expect_chip_matches_reference({mul_mat(ctx, w, x)}, 1e-10);
}

// Weights shared by batches of activations (ggml's broadcast: 4 activation batches over 2 weight
// matrices) and a result that feeds another op; on one tile and on four, where one tile runs
// several batches, each rounding into the scratch the previous batch's GEMM reads.
TEST(CompilerCodegenMatmul, MixedTypesBroadcastOverBatches) {
  for (int m : {1, 2}) {
    SCOPED_TRACE("mesh " + std::to_string(m) + "x" + std::to_string(m));
    Context ctx;
    Rng rng{14};
    Tensor* w = test::random_weight(ctx, rng, DType::BF16, {33, 31, 2});
    Tensor* x = test::random_input(ctx, rng, DType::F32, {33, 5, 4});
    expect_chip_matches_reference({unary(ctx, mul_mat(ctx, w, x), UnaryOp::SILU)}, 1e-10, mesh(m, m));
  }
}

// A result larger than the tile's SPM (4.3 MiB of f32) on one tile makes the data split walk the
// matmul in steps: the plan must reserve each step's rounded activations (codegenImmBytes) beside
// the double-buffered operands, or the program refuses to generate or overwrites a live buffer (a
// hazard, wrong sums).
TEST(CompilerCodegenMatmul, MixedTypesWalkedInStepsReserveTheirScratch) {
  Context ctx;
  Rng rng{15};
  Tensor* w = test::random_weight(ctx, rng, DType::F16, {129, 1100});
  Tensor* x = test::random_input(ctx, rng, DType::F32, {129, 1031});
  expect_chip_matches_reference({mul_mat(ctx, w, x)}, 1e-6, mesh(1, 1));
}

TEST(CompilerCodegenMatmul, Q8_0WeightsOnTheInt8Path) {
  const std::vector<Shape> shapes{{32, 33, 1}, {96, 63, 5}, {160, 129, 3}, {256, 1, 31}};
  Context ctx;
  Rng rng{16};
  expect_chip_matches_reference(matmuls(ctx, rng, DType::Q8_0, shapes), 1e-10);
}

// As above: q8_0 weights walked in steps on one tile, each step's window of whole blocks.
TEST(CompilerCodegenMatmul, Q8_0WalkedInStepsOnOneTile) {
  Context ctx;
  Rng rng{17};
  Tensor* w = test::random_weight(ctx, rng, DType::Q8_0, {256, 1100});
  Tensor* x = test::random_input(ctx, rng, DType::F32, {256, 1031});
  expect_chip_matches_reference({mul_mat(ctx, w, x)}, 1e-10, mesh(1, 1));
}

// K splits (src/compiler/Transforms/PanelMatmul.h): K walked in panels with the f32 result
// accumulated in SPM, the operand panels shared over the NoC on several tiles. The search weighs
// them against K whole; MatmulKSplit::Always makes these small shapes take them. Weights and
// activations of one type: the NE's products are exact in f32 and only the order of the f32 sums
// differs from the reference's (1e-10).
compiler::CompileOptions kSplitOn(int x, int y) {
  compiler::CompileOptions options;
  options.chip = mesh(x, y);
  options.matmul_k_split = MatmulKSplit::Always;
  return options;
}

// The groups of a run whose plan splits K, and of those the ones sharing panels over the NoC.
std::pair<int, int> kSplitGroups(const test::ChipRun& run) {
  int split = 0, shared = 0;
  for (const GroupReport& group : run.compile.groups) {
    split += group.k_panel > 0;
    shared += group.k_panel > 0 && group.noc_share;
  }
  return {split, shared};
}

TEST(CompilerCodegenMatmul, KSplitOfOneFloatTypeOnEdgeShapes) {
  // K of 1, primes around the panels (127, 129, 257, 509), and several panels with a short last
  // one (1100); rows M and N of 1, primes and 33 / 65.
  const std::vector<Shape> shapes{{1, 5, 3}, {127, 129, 7}, {129, 1, 33}, {257, 64, 1}, {509, 31, 65}, {1100, 33, 5}};
  // Each type once (every group is a kernel to compile), on one tile and on four.
  for (const auto& [type, m] : {std::pair{DType::F32, 2}, std::pair{DType::F16, 1}, std::pair{DType::BF16, 2}}) {
    SCOPED_TRACE(std::string(dtype_name(type)) + " on " + std::to_string(m) + "x" + std::to_string(m));
    Context ctx;
    Rng rng{21};
    std::vector<Tensor*> outs;
    for (const auto& [k, rows, n] : shapes) {
      outs.push_back(
          mul_mat(ctx, test::random_weight(ctx, rng, type, {k, rows}), test::random_input(ctx, rng, type, {k, n})));
    }
    const test::ChipRun run = expect_chip_matches_reference(outs, 1e-10, kSplitOn(m, m));
    const auto [split, shared] = kSplitGroups(run);
    EXPECT_EQ(split, int(shapes.size()));
    EXPECT_EQ(shared > 0, m > 1) << shared << " of the K splits share their panels";
  }
}

// On the 4x4 mesh the search cuts the result 5 x 3 (15 tiles): a grid row of three tiles shares the
// activation panel (104 rows in parts of 35, 35, 34), a grid column of five the weight panel (172
// rows in parts of 35, 35, 35, 35, 32), every GEMM waiting for the sends into its buffers. K of
// 2000 takes more steps than the panel buffers have copies: loads and sends reuse copies that
// GEMMs and sends have read (no hazard).
TEST(CompilerCodegenMatmul, KSplitSharedOnThe4x4Mesh) {
  Context ctx;
  Rng rng{24};
  Tensor* w = test::random_weight(ctx, rng, DType::BF16, {2000, 516});
  Tensor* x = test::random_input(ctx, rng, DType::BF16, {2000, 516});
  const test::ChipRun run = expect_chip_matches_reference({mul_mat(ctx, w, x)}, 1e-10, kSplitOn(4, 4));
  ASSERT_EQ(run.compile.groups.size(), 1u);
  EXPECT_GT(run.compile.groups[0].k_panel, 0);
  EXPECT_TRUE(run.compile.groups[0].noc_share);
  EXPECT_EQ(run.compile.groups[0].sharding, (std::vector<int32_t>{1, 1, 5, 3}));
  EXPECT_GT(run.report.noc_bytes, 0u);
}

// A result of 2.4 MiB of f32 on one tile: walked in several windows, each accumulated in one of
// two copies while the other is stored; a window's first GEMM waits for the store of the window
// before last.
TEST(CompilerCodegenMatmul, KSplitWalksSeveralWindowsOnOneTile) {
  Context ctx;
  Rng rng{25};
  Tensor* w = test::random_weight(ctx, rng, DType::F16, {600, 700});
  Tensor* x = test::random_input(ctx, rng, DType::F16, {600, 900});
  const test::ChipRun run = expect_chip_matches_reference({mul_mat(ctx, w, x)}, 1e-10, kSplitOn(1, 1));
  ASSERT_EQ(run.compile.groups.size(), 1u);
  EXPECT_GT(run.compile.groups[0].k_panel, 0);
  EXPECT_GT(run.compile.groups[0].steps, 2 * (600 + run.compile.groups[0].k_panel - 1) / run.compile.groups[0].k_panel);
}

// Batches, and weights broadcast over them (4 activation batches over 2 weight matrices): each
// tile's window spans several batches, one GEMM per batch and panel (K of 600: at least two).
TEST(CompilerCodegenMatmul, KSplitOverBroadcastBatches) {
  for (int m : {1, 2}) {
    SCOPED_TRACE("mesh " + std::to_string(m) + "x" + std::to_string(m));
    Context ctx;
    Rng rng{22};
    Tensor* w = test::random_weight(ctx, rng, DType::BF16, {600, 31, 2});
    Tensor* x = test::random_input(ctx, rng, DType::BF16, {600, 5, 4});
    const test::ChipRun run = expect_chip_matches_reference({mul_mat(ctx, w, x)}, 1e-10, kSplitOn(m, m));
    EXPECT_EQ(kSplitGroups(run).first, 1);
  }
}

// The mixed f16 / bf16 x f32 path rounds whole activation rows, the q8_0 path has no
// accumulation: their matmuls keep K whole even when K splits are asked for.
TEST(CompilerCodegenMatmul, KSplitLeavesMixedAndQ8_0MatmulsWhole) {
  Context ctx;
  Rng rng{23};
  std::vector<Tensor*> outs = matmuls(ctx, rng, DType::BF16, {{300, 33, 5}});
  for (Tensor* out : matmuls(ctx, rng, DType::Q8_0, {{320, 33, 5}})) outs.push_back(out);
  const test::ChipRun run = expect_chip_matches_reference(outs, 1e-10, kSplitOn(2, 2));
  EXPECT_EQ(kSplitGroups(run).first, 0);
}

TEST(CompilerCodegenMatmul, ChipSupportsTheTypePairsTheProgramsRun) {
  Context ctx;
  Rng rng{18};
  Tensor* x32 = test::random_input(ctx, rng, DType::F32, {64, 4});
  Tensor* x16 = test::random_input(ctx, rng, DType::F16, {64, 4});
  std::string why;
  for (DType w : {DType::F32, DType::F16, DType::BF16, DType::Q8_0}) {
    EXPECT_TRUE(chip_supports(*mul_mat(ctx, test::random_weight(ctx, rng, w, {64, 8}), x32), &why))
        << dtype_name(w) << ": " << why;
  }
  EXPECT_FALSE(chip_supports(*mul_mat(ctx, test::random_weight(ctx, rng, DType::Q8_0, {64, 8}), x16), &why));
  EXPECT_NE(why.find("q8_0"), std::string::npos) << why;
  EXPECT_FALSE(chip_supports(*mul_mat(ctx, test::random_weight(ctx, rng, DType::BF16, {64, 8}), x16), &why));
  EXPECT_FALSE(chip_supports(*mul_mat(ctx, test::random_weight(ctx, rng, DType::Q4_0, {64, 8}), x32), &why));
  EXPECT_NE(why.find("block-quantized"), std::string::npos) << why;
}

}  // namespace
}  // namespace tg::compiler
