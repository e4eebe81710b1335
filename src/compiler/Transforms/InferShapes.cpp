// tx8be-infer-shapes (Passes.td): re-derives result types after rewrites.
#include <mlir/Pass/Pass.h>

#include "tilegraph/compiler/Dialect/Tx8be/Transforms/Passes.h"

namespace tg::compiler::tx8be {

#define GEN_PASS_CLASSES
#include "tilegraph/compiler/Dialect/Tx8be/Transforms/Passes.h.inc"

namespace {

struct InferShapesPass : public InferShapesBase<InferShapesPass> {
  void runOnOperation() override {
    mlir::func::FuncOp function = getOperation();
    DynamicShapeParam shapes;
    const mlir::WalkResult walked = function.walk([&](ShapeInferenceOpInterface op) {
      return mlir::failed(op.inferShapes(shapes)) ? mlir::WalkResult::interrupt() : mlir::WalkResult::advance();
    });
    if (walked.wasInterrupted()) return signalPassFailure();
    // Region ops and the function take their result types from what they yield / return.
    function.walk([](mlir::Operation* op) {
      if (auto group = llvm::dyn_cast<GroupOp>(op)) {
        for (auto [result, yielded] : llvm::zip(group.getResults(), group.getYield().getOperands())) result.setType(yielded.getType());
      } else if (auto subgraph = llvm::dyn_cast<SubgraphOp>(op)) {
        for (auto [result, yielded] : llvm::zip(subgraph.getResults(), subgraph.getYield().getOperands())) result.setType(yielded.getType());
      }
    });
    mlir::Operation* terminator = function.getBody().back().getTerminator();
    function.setType(mlir::FunctionType::get(&getContext(), function.getArgumentTypes(), terminator->getOperandTypes()));
  }
};

}  // namespace

std::unique_ptr<mlir::Pass> createInferShapesPass() { return std::make_unique<InferShapesPass>(); }

}  // namespace tg::compiler::tx8be
