#pragma once
// Code generation for planned groups (the tx8-codegen pass, Codegen.cpp), shared with the program
// runner (chip_program.cpp), which binds the generated programs' parameters and runs them.
//
// A generated program's parameter block is an array of DDR addresses (uint64_t), in this order:
// the group's inputs, its results, then the constants its load_const ops read (programConstants).
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <mlir/Support/LogicalResult.h>

#include "tilegraph/compiler/Dialect/Tx8be/IR/Tx8be.h"
#include "tilegraph/compiler/tile_program_cnn.h"

namespace tg::compiler::tx8be {

// The name of the group attribute holding its program's C++ source.
inline constexpr const char* kSourceAttr = "tx8be.source";

// The tile program of `group` (its plan read from its attributes): C++ over the sim's op library
// defining `extern "C" void run(uint32_t tile, void* chip, const void* params)`. Fails with a
// diagnostic on the op it cannot generate.
mlir::FailureOr<std::string> generateTileProgram(GroupOp group);

// The load_const ops whose addresses follow the inputs and results in the parameter block.
std::vector<LoadConstOp> programConstants(GroupOp group);

// The sim format of a value of `type` in DDR and SPM (a q8_0 tensor: int8, its blocks' bytes);
// none for an element type the chip does not hold.
std::optional<sim::Format> formatOf(mlir::Type type);

// Whether codegen generates `op` (an op of a group body), and if not, why.
bool codegenSupports(mlir::Operation* op, std::string* why);

// The scratch (imm) bytes the generated call of `op` needs for a result window of `outSize`
// (N, H, W, C): the op library's own imm functions.
uint64_t codegenImmBytes(mlir::Operation* op, const std::array<int64_t, 4>& outSize);

// The CNN ops' parameters as the tile program's helpers take them (tile_program_cnn.h), for the
// programs and for the cost of a slice.
tile_program::Conv2dNchw convParams(Conv2dOp conv);
tile_program::Pool2dNchw poolParams(Pool2dOp pool);

}  // namespace tg::compiler::tx8be
