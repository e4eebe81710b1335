#include "DdrMoves.h"

#include <mlir/IR/BuiltinTypes.h>

namespace tg::compiler::tx8be {

namespace {

mlir::RankedTensorType tensorType(mlir::Value value) { return value.getType().cast<mlir::RankedTensorType>(); }

// A shape of up to four dimensions as N, H, W, C (leading 1s).
MoveDims dims4(llvm::ArrayRef<int64_t> shape) {
  MoveDims dims{1, 1, 1, 1};
  const size_t rank = shape.size();
  for (size_t i = 0; i < rank && i < 4; ++i) dims[4 - rank + i] = shape[i];
  return dims;
}

MoveDims rowMajor(const MoveDims& shape) { return {shape[1] * shape[2] * shape[3], shape[2] * shape[3], shape[3], 1}; }

}  // namespace

bool isDdrMove(llvm::StringRef name) {
  return name == "reshape" || name == "view" || name == "transpose" || name == "concat";
}

mlir::FailureOr<std::vector<DdrMove>> ddrMoves(GroupOp group) {
  std::vector<DdrMove> moves;
  for (mlir::Operation& op : group.getBodyBlock().without_terminator()) {
    const llvm::StringRef name = op.getName().stripDialect();
    if (!isDdrMove(name)) {
      return op.emitOpError("a group in DDR holds only moves (reshape, view, transpose, concat)"), mlir::failure();
    }
    for (mlir::Value operand : op.getOperands()) {
      if (!operand.isa<mlir::BlockArgument>()) {
        return op.emitOpError("a move reads other than a group argument (one move per value)"), mlir::failure();
      }
    }
    mlir::Type element = tensorType(op.getResult(0)).getElementType();
    if (!element.isF32() && !element.isF16() && !element.isBF16() && !element.isInteger(32)) {
      return op.emitOpError("a move of an element type other than f32, f16, bf16 or i32"), mlir::failure();
    }
    DdrMove move;
    move.op = &op;
    move.source = op.getOperand(0);
    move.elementBytes = element.getIntOrFloatBitWidth() / 8;
    move.size = dims4(tensorType(op.getResult(0)).getShape());
    move.dstStrides = rowMajor(move.size);
    if (name == "reshape") {
      move.srcStrides = move.dstStrides;
    } else if (auto view = mlir::dyn_cast<ViewOp>(op)) {
      MoveDims strides{0, 0, 0, 0};
      const llvm::ArrayRef<int64_t> given = view.getStrides();
      for (size_t i = 0; i < given.size() && i < 4; ++i) strides[4 - given.size() + i] = given[i];
      move.srcStrides = strides;
      move.srcOffset = view.getOffset();
    } else if (auto transpose = mlir::dyn_cast<TransposeOp>(op)) {
      const llvm::ArrayRef<int64_t> perm = transpose.getPerm();
      const size_t rank = perm.size();
      const MoveDims in = rowMajor(dims4(tensorType(move.source).getShape()));
      move.srcStrides = {0, 0, 0, 0};
      for (size_t d = 0; d < rank; ++d) move.srcStrides[4 - rank + d] = in[4 - rank + size_t(perm[d])];
    } else {  // concat: one move per operand, each into its place along the dimension
      const size_t dim = size_t(4 - tensorType(op.getResult(0)).getRank() + mlir::cast<ConcatOp>(op).getDim());
      int64_t at = 0;
      for (mlir::Value operand : op.getOperands()) {
        DdrMove part = move;
        part.source = operand;
        part.size = dims4(tensorType(operand).getShape());
        part.srcStrides = rowMajor(part.size);
        part.dstOffset = at * move.dstStrides[dim];
        moves.push_back(part);
        at += part.size[dim];
      }
      continue;
    }
    moves.push_back(move);
  }
  return moves;
}

}  // namespace tg::compiler::tx8be
