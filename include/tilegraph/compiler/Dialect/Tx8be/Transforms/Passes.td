//===- Passes.td - the tx8be passes ------------------------------------------===//
//
// Each pass is defined here (flag, summary, options) and implemented in its own file under
// src/compiler/Transforms/; registerTx8bePasses() (Passes.h) registers them all with
// tilegraph-opt. To add one: a `def` below, a create function in Passes.h, a .cpp file, a lit test.
//
//===----------------------------------------------------------------------===//

#ifndef TILEGRAPH_COMPILER_TX8BE_PASSES_TD
#define TILEGRAPH_COMPILER_TX8BE_PASSES_TD

include "mlir/Pass/PassBase.td"

def InferShapes : Pass<"tx8be-infer-shapes", "::mlir::func::FuncOp"> {
  let summary = "Recomputes every tx8be op's result type from its operands";
  let description = [{
    Visits the ops in order and calls ShapeInferenceOpInterface::inferShapes on each, so that
    a rewrite that changed an operand's shape (a layout or constant pass) leaves consistent
    types behind. Fails on an op whose operands the core op rejects. The function's result
    types follow its return's operands.
  }];
  let constructor = "::tg::compiler::tx8be::createInferShapesPass()";
  let dependentDialects = ["::tg::compiler::tx8be::Tx8beDialect"];
}

#endif  // TILEGRAPH_COMPILER_TX8BE_PASSES_TD
