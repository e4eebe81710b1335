// queryOpCost (OpCost.h): slices of tx8be ops costed by the C-model's op library, the same
// numbers the library's own queries give, growing with the slice, and the formula where the
// library has no entry.
#include <gtest/gtest.h>

#include <mlir/IR/BuiltinOps.h>
#include <mlir/Parser/Parser.h>

#include "compiler_case.h"
#include "tilegraph/compiler/Dialect/Tx8be/IR/OpCost.h"
#include "tilegraph/compiler/Dialect/Tx8be/IR/Tx8be.h"
#include "tilegraph/compiler/tile_program_cnn.h"
#include "tilegraph/core/error.h"
#include "tilegraph/sim/cgra.h"
#include "tilegraph/sim/chip_config.h"
#include "tilegraph/sim/oplib/attention.h"
#include "tilegraph/sim/oplib/elementwise.h"
#include "tilegraph/sim/oplib/gemm.h"
#include "tilegraph/sim/oplib/norm.h"

namespace tg::compiler::tx8be {
namespace {

constexpr const char* kOps = R"mlir(
func.func @ops(%a: tensor<2x64x96xf32>, %w: tensor<1x128x96xf16>, %img: tensor<2x8x9x9xf32>, %k: tensor<16x8x3x3xf32>,
               %q: tensor<1x8x1x64xf32>, %kv: tensor<1x2x40x64xf16>, %x: tensor<1x6x4x64xf32>, %pos: tensor<6xi32>,
               %table: tensor<100x64xf32>, %ids: tensor<5xi32>) {
  %mm = tx8be.matmul %w, %a : (tensor<1x128x96xf16>, tensor<2x64x96xf32>) -> tensor<2x64x128xf32>
  %conv = tx8be.conv2d %img, %k {strides = [:i64 1, 1], pads = [:i64 1, 1], dilations = [:i64 1, 1]}
      : (tensor<2x8x9x9xf32>, tensor<16x8x3x3xf32>) -> tensor<2x16x9x9xf32>
  %add = tx8be.add %a, %a : (tensor<2x64x96xf32>, tensor<2x64x96xf32>) -> tensor<2x64x96xf32>
  %silu = tx8be.silu %a : (tensor<2x64x96xf32>) -> tensor<2x64x96xf32>
  %norm = tx8be.rmsnorm %a {epsilon = 1.0e-5 : f32} : (tensor<2x64x96xf32>) -> tensor<2x64x96xf32>
  %soft = tx8be.softmax %a : (tensor<2x64x96xf32>) -> tensor<2x64x96xf32>
  %att = tx8be.attention %q, %kv, %kv {scale = 0.125 : f32}
      : (tensor<1x8x1x64xf32>, tensor<1x2x40x64xf16>, tensor<1x2x40x64xf16>) -> tensor<1x1x8x64xf32>
  %rope = tx8be.rope %x, %pos {n_dims = 64 : i32, mode = 2 : i32} : (tensor<1x6x4x64xf32>, tensor<6xi32>) -> tensor<1x6x4x64xf32>
  %get = tx8be.gather %table, %ids : (tensor<100x64xf32>, tensor<5xi32>) -> tensor<5x64xf32>
  %t = tx8be.transpose %a {perm = [:i64 0, 2, 1]} : (tensor<2x64x96xf32>) -> tensor<2x96x64xf32>
  %ld = tx8be.load_var %a : (tensor<2x64x96xf32>) -> tensor<2x64x96xf32>
  %st = tx8be.store_var %a : (tensor<2x64x96xf32>) -> tensor<2x64x96xf32>
  %erf = tx8be.gelu_erf %a : (tensor<2x64x96xf32>) -> tensor<2x64x96xf32>
  %pool = tx8be.pool2d %img {mode = "max", kernel = [:i64 2, 2], strides = [:i64 2, 2], pads = [:i64 0, 0]}
      : (tensor<2x8x9x9xf32>) -> tensor<2x8x4x4xf32>
  return
}
)mlir";

struct Ops {
  test::CompilerContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  Ops() { module = mlir::parseSourceString<mlir::ModuleOp>(kOps, &context.context); }
  mlir::Operation* op(llvm::StringRef name) {
    mlir::Operation* found = nullptr;
    module->walk([&](mlir::Operation* op) {
      if (!found && op->getName().stripDialect() == name) found = op;
    });
    return found;
  }
};

const sim::ChipConfig kChip{};

TEST(CompilerOpCost, EveryOplibOpCostsMoreForALargerSlice) {
  Ops ops;
  ASSERT_TRUE(ops.module);
  // Each op with a slice and a larger one (the whole output).
  const std::vector<std::pair<const char*, std::vector<int64_t>>> cases = {
      {"matmul", {1, 16, 128}}, {"conv2d", {1, 16, 3, 9}},  {"add", {1, 8, 96}},          {"silu", {1, 8, 96}},
      {"rmsnorm", {1, 8, 96}},  {"softmax", {1, 8, 96}},    {"attention", {1, 1, 4, 64}}, {"rope", {1, 2, 4, 64}},
      {"gather", {2, 64}},      {"transpose", {1, 96, 64}}, {"load_var", {1, 8, 96}},     {"store_var", {1, 8, 96}},
      {"pool2d", {1, 8, 2, 4}}};
  for (const auto& [name, slice] : cases) {
    SCOPED_TRACE(name);
    mlir::Operation* op = ops.op(name);
    ASSERT_NE(op, nullptr);
    const OpCostQuery part = queryOpCost(op, slice, kChip);
    const OpCostQuery whole = queryOpCost(op, kChip);
    EXPECT_EQ(part.source, CostSource::OpLib);
    EXPECT_EQ(whole.source, CostSource::OpLib);
    EXPECT_GT(part.cycles, 0u);
    EXPECT_GT(whole.cycles, part.cycles);
    EXPECT_GE(whole.immBytes, part.immBytes);
    // Asked again: the memoised answer.
    EXPECT_EQ(queryOpCost(op, slice, kChip).cycles, part.cycles);
  }
}

TEST(CompilerOpCost, SlicesCostWhatTheOpLibrarySays) {
  Ops ops;
  ASSERT_TRUE(ops.module);
  // matmul at the weight's precision, one GEMM of N x M x K per batch, each after its f32
  // activation rows are rounded to f16 (CGRA) into scratch of one batch.
  const uint64_t rounding =
      sim::oplib::cost_only_run(kChip, 0, [](sim::Tile& tile, sim::oplib::SpmArena&) {
        return sim::cgra::execute(tile, sim::cgra::ConvertV{sim::Format::FP32, sim::Format::FP16, 0, 0x4000, 16 * 96});
      }).cycles;
  const OpCostQuery mm = queryOpCost(ops.op("matmul"), {2, 16, 32}, kChip);
  EXPECT_EQ(mm.cycles, 2 * (sim::oplib::gemm_cost(kChip, sim::Format::FP16, 16, 32, 96).cycles + rounding));
  EXPECT_EQ(mm.immBytes, 16u * 96u * 2u);
  // rmsnorm rows (the op has no gamma): its imm too.
  const OpCostQuery norm = queryOpCost(ops.op("rmsnorm"), {1, 8, 96}, kChip);
  const sim::oplib::OpCost want = sim::oplib::rmsnorm_cost(kChip, sim::Format::FP32, sim::Shape4{1, 1, 8, 96}, false);
  EXPECT_EQ(norm.cycles, want.cycles);
  EXPECT_EQ(norm.immBytes, want.imm_bytes);
  EXPECT_GT(norm.immBytes, 0u);
  EXPECT_EQ(queryOpCost(ops.op("add"), {2, 64, 96}, kChip).cycles,
            sim::oplib::binary_cost(kChip, sim::cgra::ArithOp::Add, sim::Format::FP32, sim::MemLayout::Tensor,
                                    sim::Shape4{1, 2, 64, 96})
                .cycles);
  // conv: rows 2..4 of the output read 5 input rows (the halo), 3 x 3 kernel, 8 channels in; the
  // tile program's NE convolution and its layout transposes (tile_program_cnn.h) and their scratch.
  const OpCostQuery conv = queryOpCost(ops.op("conv2d"), {1, 16, 3, 9}, kChip);
  EXPECT_GT(conv.cycles, sim::oplib::conv2d_cost(kChip, sim::oplib::Conv2dParam{}, sim::Format::FP32,
                                                 sim::Shape4{1, 5, 11, 8}, sim::Shape4{3, 3, 8, 16})
                             .cycles);
  EXPECT_EQ(conv.immBytes,
            tile_program::conv2d_nchw_imm_bytes(sim::Format::FP32, tile_program::Conv2dNchw{}, 8, 3, 3, 16, 3, 9));
  // attention: one decode call per query row, the cache's two heads shared by eight.
  EXPECT_EQ(queryOpCost(ops.op("attention"), kChip).cycles,
            sim::oplib::attention_decode_cost(kChip, sim::Format::FP16, 8, 2, 40, 64).cycles);
  // The interface asks for the whole op on the default chip.
  EXPECT_EQ(cast<OpLibInterface>(ops.op("rmsnorm")).getOpClockCycle(), queryOpCost(ops.op("rmsnorm"), kChip).cycles);
}

TEST(CompilerOpCost, OpsWithoutALibraryEntryUseTheFormula) {
  Ops ops;
  ASSERT_TRUE(ops.module);
  const OpCostQuery erf = queryOpCost(ops.op("gelu_erf"), kChip);
  EXPECT_EQ(erf.source, CostSource::Estimate);
  EXPECT_GT(erf.cycles, 0u);
  EXPECT_LT(queryOpCost(ops.op("gelu_erf"), {1, 8, 96}, kChip).cycles, erf.cycles);
  // A slice larger than an SPM: the formula too.
  sim::ChipConfig small = kChip;
  small.spm_bytes = 4096;
  EXPECT_EQ(queryOpCost(ops.op("matmul"), small).source, CostSource::Estimate);
}

TEST(CompilerOpCost, ASliceTheOpRefusesIsAnError) {
  Ops ops;
  ASSERT_TRUE(ops.module);
  EXPECT_THROW(queryOpCost(ops.op("rmsnorm"), {1, 8, 48}, kChip), Error);  // half rows
  EXPECT_THROW(queryOpCost(ops.op("add"), {1, 8}, kChip), Error);          // wrong rank
}

}  // namespace
}  // namespace tg::compiler::tx8be
