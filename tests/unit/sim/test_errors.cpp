// Bad programs fail with the instruction, the tile and the address named, never a crash or a
// silently wrong answer.
#include <gtest/gtest.h>

#include "sim_test_utils.h"
#include "tilegraph/sim/cgra.h"
#include "tilegraph/sim/dte.h"
#include "tilegraph/sim/lsu.h"
#include "tilegraph/sim/ne.h"

namespace tg::sim {
namespace {

using test::expect_error;

ChipConfig small() {
  ChipConfig c;
  c.mesh_x = c.mesh_y = 2;
  c.spm_bytes = 1 << 20;
  return c;
}

TEST(Errors, OutOfSpmAccessNamesTheInstructionAndAddress) {
  Chip chip(small());
  Tile& tile = chip.tile(2);
  test::put(tile, 0, std::vector<float>(64, 1.0f), Format::FP32);
  expect_error(
      [&] {
        execute(tile, cgra::ArithVS{cgra::ArithOp::Add, Format::FP32, 0, 1.0, (1 << 20) - 128, 64});
      },
      "CGRATensor_ArithOp_VS_add.fp32 on tile 2: SPM access [0xfff80, 0x100080) is outside the tile's 1048576-byte "
      "SPM");
  expect_error(
      [&] {
        execute(tile, cgra::MoveV{Format::FP32, uint64_t(1) << 40, 0, 4});
      },
      "CGRATensor_MoveOp_V_copy.fp32 on tile 2: SPM access [0x10000000000, 0x10000000010) is outside");
  // Nothing was issued by the failed instructions.
  EXPECT_EQ(chip.report().instructions, 0u);
}

TEST(Errors, UninitialisedReadsNameTheFirstUnwrittenByte) {
  Chip chip(small());
  Tile& tile = chip.tile(1);
  test::put(tile, 0, std::vector<float>(10, 1.0f), Format::FP32);
  expect_error(
      [&] {
        execute(tile, cgra::UnaryV{cgra::UnaryOp::Relu, Format::FP32, 0, 4096, 11});
      },
      "CGRATensor_ActOp_V_relu.fp32 on tile 1: reads SPM [0x0, 0x2c) but the byte at 0x28 was never written");
  expect_error(
      [&] {
        execute(tile, lsu::LoadConst{1 << 20, 0, 16});
      },
      "op_loadConst: reads DDR [0x100000, 0x100010) but the byte at 0x100000 was never written");
  expect_error(
      [&] {
        execute(tile, ne::Gemm{Format::FP32, 0, 0, 4096, 4, 2, 4});
      },
      "NE_Gemm.fp32 on tile 1: reads SPM [0x0, 0x40) but the byte at 0x28 was never written");
  expect_error(
      [&] {
        execute(tile, dte::Copy{64, 0, 0, 8});
      },
      "DTE_copy on tile 1: reads SPM [0x40, 0x48) but the byte at 0x40");
}

TEST(Errors, UnsupportedFormatsAndLayoutsNameTheInstruction) {
  Chip chip(small());
  Tile& tile = chip.tile(0);
  test::put(tile, 0, std::vector<float>(64, 1.0f), Format::FP32);
  expect_error(
      [&] {
        execute(tile, cgra::UnaryV{cgra::UnaryOp::Exp, Format::INT8, 0, 4096, 8});
      },
      "CGRATensor_TransOp_V_exp.int8 on tile 0: unsupported format int8 (takes fp32, fp16, bf16, tf32)");
  expect_error(
      [&] {
        execute(tile, cgra::PoolTensor{cgra::PoolOp::Max, Format::INT32, 0, 4096});
      },
      "CGRATensor_PoolOp_Tensor_max.int32 on tile 0: unsupported format int32");
  std::vector<uint8_t> ddr(1024);
  chip.ddr().write(0, ddr.data(), ddr.size());
  expect_error(
      [&] {
        execute(tile, lsu::LoadVar{Format::INT32, {0, {1, 1, 1, 8}, {0, 0, 0, 0}, {1, 1, 1, 8}}, 0, MemLayout::NCx});
      },
      "op_loadVar.int32 on tile 0: layout NCx has no alignment rule for int32");
  expect_error(
      [&] {
        execute(tile, lsu::LoadVar{Format::FP32, {0, {2, 1, 1, 8}, {0, 0, 0, 0}, {2, 1, 1, 8}}, 0, MemLayout::Cx});
      },
      "op_loadVar.fp32 on tile 0: layout Cx holds one batch");
  expect_error(
      [&] {
        execute(tile, lsu::LoadVar{Format::FP32, {0, {1, 1, 1, 8}, {0, 0, 0, 4}, {1, 1, 1, 8}}, 0, MemLayout::NTensor});
      },
      "op_loadVar.fp32 on tile 0: slice 1x1x1x8 at 0x0x0x4 does not fit in the tensor 1x1x1x8");
  expect_error(
      [&] {
        execute(tile, dte::Copy{0, 0, 0, 8});
      },
      "DTE_copy on tile 0: the destination is the issuing tile");
  expect_error([&] { execute(tile, dte::Copy{0, 9, 0, 8}); }, "DTE_copy on tile 0: destination tile 9 does not exist");
  expect_error([&] { chip.tile(4); }, "tile 4 does not exist (the chip has 4 tiles)");
  expect_error([&] { chip.hops(0, 9); }, "hops: tile 9 does not exist");
}

TEST(Errors, DdrIsAnAddressSpaceNotAnAllocation) {
  Chip chip{ChipConfig{}};
  const uint64_t top = chip.ddr().size() - 8;
  const uint64_t value = 0x1122334455667788ull;
  chip.ddr().write(top, &value, 8);
  uint64_t back = 0;
  chip.ddr().read(top, &back, 8);
  EXPECT_EQ(back, value);
  EXPECT_LE(chip.ddr().allocated_bytes(), 1u << 20);
  expect_error([&] { chip.ddr().write(top, &value, 16); }, "is outside the chip's 68719476736-byte DDR");
}

}  // namespace
}  // namespace tg::sim
