#pragma once
// The bytes a window of a tensor takes in SPM: its elements in the tensor's element type, a
// block-quantized type in whole blocks along the innermost dimension (a window of a q8_0 row
// holds whole 32-element blocks). Shared by the data split (does a slice fit the SPM) and the
// plan's attribute form (the size of a buffer).
#include <cstdint>

#include <mlir/IR/BuiltinTypes.h>

namespace tg::compiler::tx8be {

// `type` is the tensor's (its element type is what counts), `window` the window's shape.
uint64_t window_bytes(mlir::RankedTensorType type, llvm::ArrayRef<int64_t> window);

}  // namespace tg::compiler::tx8be
