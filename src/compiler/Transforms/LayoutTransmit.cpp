// layout-transmit (Passes.td): spreads the layouts layout-init gave gemm and CNN ops over the
// graph, forwards through ShapeInferenceOpInterface::inferLayout and backwards into producers
// that pass layouts through, as the TX8 back end's layout transmission does. Layouts cross into
// and out of tx8be.subgraph (and group) bodies through their arguments.
#include <deque>

#include <mlir/Pass/Pass.h>

#include "LayoutModes.h"
#include "tilegraph/compiler/Dialect/Tx8be/Transforms/Passes.h"

namespace tg::compiler::tx8be {

#define GEN_PASS_CLASSES
#include "tilegraph/compiler/Dialect/Tx8be/Transforms/Passes.h.inc"

namespace {

struct LayoutTransmitPass : public LayoutTransmitBase<LayoutTransmitPass> {
  void runOnOperation() override {
    std::deque<mlir::Operation*> worklist;
    getOperation().walk([&](ShapeInferenceOpInterface op) {
      if (!layout_unknown(op)) worklist.push_back(op);
    });
    while (!worklist.empty()) {
      mlir::Operation* op = worklist.front();
      worklist.pop_front();
      // Forwards: users whose first operand this op defines infer from it, inside a subgraph
      // the users of the body argument it becomes.
      auto forward = [&](mlir::Operation* user) {
        auto infer = mlir::dyn_cast<ShapeInferenceOpInterface>(user);
        if (!infer || !layout_unknown(user) || producer_across_regions(user->getOperand(0)) != op) return;
        if (mlir::succeeded(infer.inferLayout())) worklist.push_back(user);
      };
      for (mlir::OpOperand& use : op->getUses()) {
        mlir::Operation* user = use.getOwner();
        if (!mlir::isa<SubgraphOp, GroupOp>(user)) {
          forward(user);
          continue;
        }
        for (mlir::Operation* inner : user->getRegion(0).front().getArgument(use.getOperandNumber()).getUsers()) {
          forward(inner);
        }
      }
      // Backwards: a producer takes the layout this op expects of the operand, if the producer
      // lays its result out as its input (or has no input: a constant).
      const std::string layout = op->getAttrOfType<mlir::StringAttr>("layout_str").str();
      for (mlir::OpOperand& operand : op->getOpOperands()) {
        mlir::Operation* producer = producer_across_regions(operand.get());
        if (!producer || !mlir::isa<ShapeInferenceOpInterface>(producer) || !layout_unknown(producer)) continue;
        if (producer->getNumOperands() != 0 && !detail::transmitsLayout(producer)) continue;
        const std::string expected = layout_component(layout, operand.getOperandNumber(), op->getNumOperands());
        if (expected.empty() || expected == "Unknown") continue;
        producer->setAttr("layout_str", mlir::StringAttr::get(producer->getContext(), expected));
        worklist.push_back(producer);
      }
    }
    // What no anchor reaches (cut off by a reshape or broadcast) takes its default.
    getOperation().walk([&](OpLibInterface op) {
      if (layout_unknown(op))
        op->setAttr("layout_str", mlir::StringAttr::get(op->getContext(), op.queryOpAttr().defaultLayout));
    });
  }
};

}  // namespace

std::unique_ptr<mlir::Pass> createLayoutTransmitPass() { return std::make_unique<LayoutTransmitPass>(); }

}  // namespace tg::compiler::tx8be
