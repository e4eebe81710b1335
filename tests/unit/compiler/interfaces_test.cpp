// The op interfaces' answers on small modules: what the layout, constant and grouping passes
// query (queryOpAttr, inferLayout, the sharding rules, cost and scratch), and tx8be-infer-shapes
// repairing stale result types.
#include <gtest/gtest.h>

#include <mlir/IR/BuiltinOps.h>
#include <mlir/IR/MLIRContext.h>
#include <mlir/IR/Verifier.h>
#include <mlir/Parser/Parser.h>
#include <mlir/Pass/PassManager.h>

#include "tilegraph/compiler/Dialect/Tx8be/IR/Tx8be.h"
#include "tilegraph/compiler/Dialect/Tx8be/Transforms/Passes.h"
#include "tilegraph/compiler/registration.h"
#include "tilegraph/compiler/tile_program_cnn.h"
#include "tilegraph/sim/chip_config.h"
#include "tilegraph/sim/oplib/gemm.h"

namespace tg::compiler::tx8be {
namespace {

struct Parsed {
  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  explicit Parsed(const char* text) {
    mlir::DialectRegistry registry;
    register_dialects(registry);
    context.appendDialectRegistry(registry);
    module = mlir::parseSourceString<mlir::ModuleOp>(text, &context);
  }
  template <class OpT>
  OpT first() {
    OpT found;
    module->walk([&](OpT op) {
      if (!found) found = op;
    });
    return found;
  }
};

constexpr const char* kCnn = R"mlir(
func.func @cnn(%x: tensor<2x16x5x4xf32>, %c: tensor<16xf32>, %b: tensor<1x16x5x4xf32>) -> tensor<2x16x5x4xf32> {
  %0 = tx8be.batchnorm_inference %x, %c, %c, %c, %c {epsilon = 1.0e-5 : f32, layout_str = "NHWC",
       dev_info = #tx8be.dev_attr<imm_size = 0, mem_layout = NCx, multi_buf_en = false, multi_buf_num = 1, out_shape_buf_idx = [], temporal_mem_slice = [], source_type = 0, imm_addr = -1, mem_addr = []>}
       : (tensor<2x16x5x4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<2x16x5x4xf32>
  %1 = tx8be.add %0, %b : (tensor<2x16x5x4xf32>, tensor<1x16x5x4xf32>) -> tensor<2x16x5x4xf32>
  %2 = tx8be.reshape %1 : (tensor<2x16x5x4xf32>) -> tensor<2x320xf32>
  %3 = tx8be.reshape %2 : (tensor<2x320xf32>) -> tensor<2x16x5x4xf32>
  return %3 : tensor<2x16x5x4xf32>
}
)mlir";

TEST(CompilerInterfaces, BatchnormAsksForNpuAlignedChannels) {
  Parsed p(kCnn);
  ASSERT_TRUE(p.module);
  auto bn = p.first<BatchNormInferenceOp>();
  const OpAttr attr = cast<OpLibInterface>(bn.getOperation()).queryOpAttr();
  EXPECT_EQ(attr.alignMode, AlignMode::NpuAlign);
  EXPECT_TRUE(attr.needPresetToNPU);
  EXPECT_EQ(attr.defaultLayout, "NTensor");  // batch 2
  EXPECT_EQ(attr.engine, Engine::CT);
  // Scratch as the tile program's batchnorm states it (tile_program_cnn.h: the NCHW window
  // transposed to NHWC, the variance's copy).
  EXPECT_EQ(cast<OpLibInterface>(bn.getOperation()).getImmSpSize(),
            tile_program::batchnorm_nchw_imm_bytes(false, {2, 16, 5, 4}));
}

TEST(CompilerInterfaces, LayoutFollowsTheFirstOperandAndStopsAtOpsThatCannotInfer) {
  Parsed p(kCnn);
  auto add = p.first<AddOp>();
  ASSERT_TRUE(mlir::succeeded(cast<ShapeInferenceOpInterface>(add.getOperation()).inferLayout()));
  EXPECT_EQ(add.getLayoutStr(), "NHWC");
  ASSERT_TRUE(add.getDevInfo());
  EXPECT_EQ(add.getDevInfo()->getMemLayout(), LayoutMode::NCx);
  // A reshape regroups elements: the layout does not carry over.
  auto reshape = p.first<ReshapeOp>();
  EXPECT_TRUE(mlir::failed(cast<ShapeInferenceOpInterface>(reshape.getOperation()).inferLayout()));
}

TEST(CompilerInterfaces, TransposePermutesTheLayoutLetters) {
  Parsed p(R"mlir(
func.func @t(%x: tensor<3x4x5x6xf32>) -> tensor<3x5x6x4xf32> {
  %0 = tx8be.relu %x {layout_str = "NCHW"} : (tensor<3x4x5x6xf32>) -> tensor<3x4x5x6xf32>
  %1 = tx8be.transpose %0 {perm = [:i64 0, 2, 3, 1]} : (tensor<3x4x5x6xf32>) -> tensor<3x5x6x4xf32>
  return %1 : tensor<3x5x6x4xf32>
}
)mlir");
  auto transpose = p.first<TransposeOp>();
  ASSERT_TRUE(mlir::succeeded(cast<ShapeInferenceOpInterface>(transpose.getOperation()).inferLayout()));
  EXPECT_EQ(transpose.getLayoutStr(), "NHWC");
}

TEST(CompilerInterfaces, ShardingFollowsTheOutputExceptOnRepeatedDimensions) {
  Parsed p(kCnn);
  auto add = p.first<AddOp>();
  ShardingSplitParam out{{2, 4, 1, 1}, {1, 1, 5, 1}};
  const std::vector<ShardingSplitParam> split = cast<ShardingInterface>(add.getOperation()).tileShardingSplit(out);
  ASSERT_EQ(split.size(), 2u);  // one per operand
  EXPECT_EQ(split[0].outSharding, (std::vector<int32_t>{2, 4, 1, 1}));
  EXPECT_EQ(split[1].outSharding, (std::vector<int32_t>{1, 4, 1, 1}));  // batch 1: repeated
  EXPECT_EQ(split[1].outSplit, (std::vector<int32_t>{1, 1, 5, 1}));
  // The batchnorm's per-channel vectors follow the channel axis only.
  auto bn = p.first<BatchNormInferenceOp>();
  const std::vector<ShardingSplitParam> bn_split = cast<ShardingInterface>(bn.getOperation()).tileShardingSplit(out);
  ASSERT_EQ(bn_split.size(), 5u);
  EXPECT_EQ(bn_split[0].outSharding, (std::vector<int32_t>{2, 4, 1, 1}));
  EXPECT_EQ(bn_split[1].outSharding, (std::vector<int32_t>{4}));
  const std::vector<WindowParam> window =
      cast<ShardingInterface>(add.getOperation()).backWindow(WindowParam{{1, 0, 2, 0}, {1, 16, 3, 4}});
  ASSERT_EQ(window.size(), 2u);
  EXPECT_EQ(window[0].start, (std::vector<int64_t>{1, 0, 2, 0}));
  EXPECT_EQ(window[0].size, (std::vector<int64_t>{1, 16, 3, 4}));
  EXPECT_EQ(window[1].start, (std::vector<int64_t>{0, 0, 2, 0}));  // batch 1: repeated
  EXPECT_EQ(window[1].size, (std::vector<int64_t>{1, 16, 3, 4}));
  SliceParam step{{1, 8, 5, 4}};
  const std::vector<SliceParam> slices = cast<ShardingInterface>(add.getOperation()).temporalSliceShape(step);
  ASSERT_EQ(slices.size(), 2u);
  EXPECT_EQ(slices[0].shape, (std::vector<int64_t>{1, 8, 5, 4}));
  EXPECT_EQ(slices[1].shape, (std::vector<int64_t>{1, 8, 5, 4}));
}

TEST(CompilerInterfaces, MatmulCyclesAreTheOpLibrarysGemm) {
  Parsed p(R"mlir(
func.func @mm(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>, %c: tensor<64x512xf32>, %d: tensor<64x512xf32>) {
  %0 = tx8be.matmul %a, %b : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %1 = tx8be.matmul %c, %d : (tensor<64x512xf32>, tensor<64x512xf32>) -> tensor<64x64xf32>
  return
}
)mlir");
  std::vector<uint64_t> cycles;
  p.module->walk([&](MatMulOp op) { cycles.push_back(cast<OpLibInterface>(op.getOperation()).getOpClockCycle()); });
  ASSERT_EQ(cycles.size(), 2u);
  // The C-model's op library: one f32 GEMM of 64 x 64 x 64, then one with K = 512.
  EXPECT_EQ(cycles[0], sim::oplib::gemm_cost(sim::ChipConfig{}, sim::Format::FP32, 64, 64, 64).cycles);
  EXPECT_GT(cycles[1], 4 * cycles[0]);
  EXPECT_EQ(cast<OpLibInterface>(p.first<MatMulOp>().getOperation())
                .genOpCode(OpCodeParam{"param", {"in0", "in1"}, "", "out"}),
            "op_matmul(&param, &in0, &in1, &out);");
}

TEST(CompilerInterfaces, InferShapesFollowsAChangedArgument) {
  Parsed p(R"mlir(
func.func @f(%x: tensor<2x8xf32>, %w: tensor<4x8xf32>) -> tensor<2x4xf32> {
  %0 = tx8be.group(%x) : (tensor<2x8xf32>) -> tensor<2x8xf32> {
  ^bb0(%a: tensor<2x8xf32>):
    %s = tx8be.silu %a : (tensor<2x8xf32>) -> tensor<2x8xf32>
    tx8be.yield %s : tensor<2x8xf32>
  }
  %1 = tx8be.matmul %w, %0 : (tensor<4x8xf32>, tensor<2x8xf32>) -> tensor<2x4xf32>
  return %1 : tensor<2x4xf32>
}
)mlir");
  auto function = p.first<mlir::func::FuncOp>();
  // A rewrite gave the input three rows: the types of the group, its body and the matmul after
  // it are stale until the pass runs.
  auto wider = mlir::RankedTensorType::get({3, 8}, mlir::Float32Type::get(&p.context));
  function.getArgument(0).setType(wider);
  function.setType(
      mlir::FunctionType::get(&p.context, {wider, function.getArgument(1).getType()}, function.getResultTypes()));
  EXPECT_TRUE(mlir::failed(mlir::verify(*p.module)));
  mlir::PassManager pm(&p.context);
  pm.addNestedPass<mlir::func::FuncOp>(createInferShapesPass());
  ASSERT_TRUE(mlir::succeeded(pm.run(*p.module)));
  EXPECT_TRUE(mlir::succeeded(mlir::verify(*p.module)));
  EXPECT_EQ(function.getResultTypes()[0], mlir::RankedTensorType::get({3, 4}, mlir::Float32Type::get(&p.context)));
}

}  // namespace
}  // namespace tg::compiler::tx8be
