#pragma once
// The DDR-to-DDR moves of a group working in DDR (group_tag 2: the views, reshapes, transposes and
// concats between groups), each as element strides on both sides. The move program (Codegen.cpp)
// and the estimate (Estimate.cpp) both cut them into DMA boxes (tilegraph/compiler/ddr_move.h).
#include <cstdint>
#include <vector>

#include <mlir/Support/LogicalResult.h>

#include "tilegraph/compiler/Dialect/Tx8be/IR/Tx8be.h"
#include "tilegraph/compiler/ddr_move.h"

namespace tg::compiler::tx8be {

// One operand of a move: element i (4-D, N H W C) of `size` is read at srcOffset + sum_d i[d] *
// srcStrides[d] of `source` and written at dstOffset + sum_d i[d] * dstStrides[d] of `op`'s result
// (offsets and strides in elements).
struct DdrMove {
  mlir::Operation* op = nullptr;
  mlir::Value source;
  int64_t srcOffset = 0, dstOffset = 0;
  MoveDims srcStrides{}, dstStrides{}, size{};
  uint64_t elementBytes = 0;
};

// Whether an op of this name (its mnemonic) is one of the moves.
bool isDdrMove(llvm::StringRef name);

// The moves of `group`, in the order of its ops. Fails (with a diagnostic on the op) on an op that
// is not a move or reads anything but the group's arguments, and on an element type that is not
// f32, f16, bf16 or i32.
mlir::FailureOr<std::vector<DdrMove>> ddrMoves(GroupOp group);

}  // namespace tg::compiler::tx8be
