// group-optimization (Passes.td): the compute ops no pattern grouped each become a group of
// their own, so that every op reaches the sharding search inside a group.
#include <mlir/Pass/Pass.h>

#include "GraphBlocks.h"
#include "GroupBuilder.h"
#include "tilegraph/compiler/Dialect/Tx8be/Transforms/Passes.h"

namespace tg::compiler::tx8be {

#define GEN_PASS_CLASSES
#include "tilegraph/compiler/Dialect/Tx8be/Transforms/Passes.h.inc"

namespace {

struct GroupOptimizationPass : public GroupOptimizationBase<GroupOptimizationPass> {
  void runOnOperation() override {
    llvm::SmallVector<mlir::Operation*> singles;
    for (mlir::Block* block : graph_blocks(getOperation())) {
      for (mlir::Operation& op : *block) {
        if (is_groupable(&op)) singles.push_back(&op);
      }
    }
    // A single op's group sits where the op was: the order stays topological.
    for (mlir::Operation* op : singles) create_group({op});
  }
};

}  // namespace

std::unique_ptr<mlir::Pass> createGroupOptimizationPass() { return std::make_unique<GroupOptimizationPass>(); }

}  // namespace tg::compiler::tx8be
