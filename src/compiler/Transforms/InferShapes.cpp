// tx8be-infer-shapes (Passes.td): re-derives result types after rewrites.
#include <mlir/Pass/Pass.h>

#include "tilegraph/compiler/Dialect/Tx8be/Transforms/Passes.h"

namespace tg::compiler::tx8be {

#define GEN_PASS_CLASSES
#include "tilegraph/compiler/Dialect/Tx8be/Transforms/Passes.h.inc"

namespace {

// Ops in order, so that each sees its operands' new types; a group's or subgraph's body takes
// its arguments' types from the op's operands and gives the op its yield's types.
mlir::LogicalResult infer_block(mlir::Block& block, DynamicShapeParam& shapes) {
  for (mlir::Operation& op : block) {
    if (llvm::isa<GroupOp, SubgraphOp>(op)) {
      mlir::Block& body = op.getRegion(0).front();
      for (auto [argument, operand] : llvm::zip(body.getArguments(), op.getOperands()))
        argument.setType(operand.getType());
      if (mlir::failed(infer_block(body, shapes))) return mlir::failure();
      for (auto [result, yielded] : llvm::zip(op.getResults(), body.getTerminator()->getOperands())) {
        result.setType(yielded.getType());
      }
    } else if (auto inferable = llvm::dyn_cast<ShapeInferenceOpInterface>(op)) {
      if (mlir::failed(inferable.inferShapes(shapes))) return mlir::failure();
    }
  }
  return mlir::success();
}

struct InferShapesPass : public InferShapesBase<InferShapesPass> {
  void runOnOperation() override {
    mlir::func::FuncOp function = getOperation();
    DynamicShapeParam shapes;
    if (mlir::failed(infer_block(function.getBody().front(), shapes))) return signalPassFailure();
    mlir::Operation* terminator = function.getBody().front().getTerminator();
    function.setType(
        mlir::FunctionType::get(&getContext(), function.getArgumentTypes(), terminator->getOperandTypes()));
  }
};

}  // namespace

std::unique_ptr<mlir::Pass> createInferShapesPass() { return std::make_unique<InferShapesPass>(); }

}  // namespace tg::compiler::tx8be
