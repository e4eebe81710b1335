#pragma once
// The x/y tile mesh a module is compiled for: the module attributes tx8be.tile_dx and
// tx8be.tile_dy, or the TX8 chip's 4x4 when they are absent.
#include <cstdint>

#include <mlir/IR/BuiltinOps.h>
#include <mlir/Support/LogicalResult.h>

namespace tg::compiler::tx8be {

struct TileMesh {
  int32_t dx = 4;
  int32_t dy = 4;
  int32_t tiles() const { return dx * dy; }
};

// Fails (with a diagnostic on the module) for an attribute that is not a positive integer.
mlir::FailureOr<TileMesh> tile_mesh(mlir::ModuleOp module);

}  // namespace tg::compiler::tx8be
