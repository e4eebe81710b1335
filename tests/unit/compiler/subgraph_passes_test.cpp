// The layout and grouping passes inside a tx8be.subgraph: random graphs moved into one subgraph
// (one chip's program) keep their results through each pass, and the subgraph's compute ops
// end in groups inside it.
#include <gtest/gtest.h>

#include <mlir/IR/Builders.h>

#include "compiler_case.h"
#include "random_graph.h"
#include "tilegraph/compiler/Dialect/Tx8be/IR/Tx8be.h"
#include "tilegraph/compiler/interpreter.h"

namespace tg::compiler {
namespace {

// Moves every op of the function's body into one subgraph taking the function's arguments and
// yielding what it returned.
void wrap_in_subgraph(mlir::ModuleOp module) {
  auto function = *module.getOps<mlir::func::FuncOp>().begin();
  mlir::Block& body = function.getBody().front();
  mlir::Operation* ret = body.getTerminator();
  mlir::OpBuilder builder(ret);
  auto subgraph = builder.create<tx8be::SubgraphOp>(ret->getLoc(), ret->getOperandTypes(),
                                                    mlir::ValueRange(function.getArguments()));
  mlir::Block& inner = subgraph.getBodyBlock();
  for (mlir::Operation& op : llvm::make_early_inc_range(body)) {
    if (&op != subgraph.getOperation() && &op != ret) op.moveBefore(&inner, inner.end());
  }
  for (unsigned i = 0; i < function.getNumArguments(); ++i) {
    function.getArgument(i).replaceUsesWithIf(
        inner.getArgument(i), [&](mlir::OpOperand& use) { return subgraph->isProperAncestor(use.getOwner()); });
  }
  builder.setInsertionPointToEnd(&inner);
  builder.create<tx8be::YieldOp>(ret->getLoc(), ret->getOperands());
  ret->setOperands(subgraph.getResults());
}

constexpr const char* kSteps[] = {"func.func(layout-init)",         "func.func(layout-transmit)",
                                  "func.func(layout-align-to-npu)", "func.func(layout-align-opt)",
                                  "func.func(group-pattern)",       "func.func(group-optimization)",
                                  "func.func(group-ldst)",          "group-mapping"};

TEST(CompilerSubgraphPasses, RandomGraphsInASubgraphKeepTheirResults) {
  for (uint32_t seed = 300; seed < 310; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    test::CompilerContext c;
    Context ctx;
    test::CompilerCase cc = test::make_compiler_case(c.context, test::random_graph(ctx, seed));
    mlir::ModuleOp module = *cc.imported.module;
    wrap_in_subgraph(module);
    ASSERT_EQ(test::run_pipeline(module, "func.func(tx8be-infer-shapes)"), "");  // verifies the wrapped module
    const std::vector<HostTensor> before = interpret(module, cc.inputs, cc.imported.constants);
    test::expect_close(before, cc.reference, 0.0, "wrapped");
    for (const char* step : kSteps) {
      ASSERT_EQ(test::run_pipeline(module, step), "") << step;
      test::expect_close(interpret(module, cc.inputs, cc.imported.constants), before, 0.0,
                         std::string("after ") + step);
      if (std::string(step) != "func.func(layout-transmit)") continue;
      module.walk([&](tx8be::OpLibInterface op) {
        auto layout = op->getAttrOfType<mlir::StringAttr>("layout_str");
        EXPECT_TRUE(layout && layout.getValue() != "Unknown") << op->getName().getStringRef().str() << " has no layout";
      });
    }
    int grouped = 0;
    module.walk([&](mlir::Operation* op) {
      if (!mlir::isa<tx8be::ComputeInterface>(op) || mlir::isa<tx8be::ConstantOp, tx8be::LoadConstOp>(op)) return;
      EXPECT_TRUE(op->getParentOfType<tx8be::SubgraphOp>()) << "left the subgraph";
      if (op->getParentOfType<tx8be::GroupOp>()) {
        ++grouped;
      } else {
        ADD_FAILURE() << op->getName().getStringRef().str() << " is outside every group";
      }
    });
    EXPECT_GT(grouped, 0);
  }
}

}  // namespace
}  // namespace tg::compiler
