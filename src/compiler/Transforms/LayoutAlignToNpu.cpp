// layout-align-to-npu (Passes.td): where a value's form (compact or channel-aligned) is not the
// one its user needs, a channel_norm converts it; every op's dev_info.mem_layout records its
// result's form. The alignment needs come from queryOpAttr().alignMode.
#include <mlir/IR/Builders.h>
#include <mlir/Pass/Pass.h>

#include "GraphBlocks.h"
#include "LayoutModes.h"
#include "tilegraph/compiler/Dialect/Tx8be/Transforms/Passes.h"

namespace tg::compiler::tx8be {

#define GEN_PASS_CLASSES
#include "tilegraph/compiler/Dialect/Tx8be/Transforms/Passes.h.inc"

namespace {

struct LayoutAlignToNpuPass : public LayoutAlignToNpuBase<LayoutAlignToNpuPass> {
  // Whether each value is in the aligned form; function arguments (absent) are compact.
  llvm::DenseMap<mlir::Value, bool> aligned_;

  bool is_value_aligned(mlir::Value value) const {
    auto it = aligned_.find(value);
    return it != aligned_.end() && it->second;
  }

  // Makes operand `operand` of its owner arrive in the `aligned` form, through a channel_norm
  // inserted before the owner when the value is in the other form.
  void require(mlir::OpOperand& operand, bool aligned) {
    mlir::Value value = operand.get();
    if (is_value_aligned(value) == aligned) return;
    mlir::Operation* user = operand.getOwner();
    mlir::OpBuilder builder(user);
    auto norm = builder.create<ChannelNormOp>(user->getLoc(), mlir::TypeRange{value.getType()}, mlir::ValueRange{value},
                                              llvm::ArrayRef<mlir::NamedAttribute>{});
    if (mlir::Operation* producer = value.getDefiningOp()) {
      if (auto layout = producer->getAttrOfType<mlir::StringAttr>("layout_str")) {
        const std::string result =
            layout_component(layout.getValue(), producer->getNumOperands(), producer->getNumOperands());
        if (!result.empty()) norm->setAttr("layout_str", builder.getStringAttr(result));
      }
    }
    set_mem_layout(norm, layout_mode(value.getType(), aligned));
    aligned_[norm.getResult()] = aligned;
    operand.set(norm.getResult());
  }

  void runOnOperation() override {
    aligned_.clear();
    for (mlir::Block* block : graph_blocks(getOperation())) run_on_block(*block);
  }

  void run_on_block(mlir::Block& block) {
    for (mlir::Operation& op : llvm::make_early_inc_range(block)) {
      if (mlir::isa<ChannelNormOp>(op)) {  // already converting: its result is in its target form
        aligned_[op.getResult(0)] = is_aligned(mem_layout(&op));
        continue;
      }
      auto lib = mlir::dyn_cast<OpLibInterface>(&op);
      if (!lib) {  // the function's return and other ops outside the dialect take compact values
        for (mlir::OpOperand& operand : op.getOpOperands()) require(operand, false);
        continue;
      }
      bool aligned = false;
      switch (lib.queryOpAttr().alignMode) {
        case AlignMode::NpuAlign: aligned = true; break;
        case AlignMode::Any: aligned = op.getNumOperands() > 0 && is_value_aligned(op.getOperand(0)); break;
        default: aligned = false; break;
      }
      for (mlir::OpOperand& operand : op.getOpOperands()) require(operand, aligned);
      if (op.getNumResults() == 1) {
        aligned_[op.getResult(0)] = aligned;
        set_mem_layout(&op, layout_mode(op.getResult(0).getType(), aligned));
      }
    }
  }
};

}  // namespace

std::unique_ptr<mlir::Pass> createLayoutAlignToNpuPass() { return std::make_unique<LayoutAlignToNpuPass>(); }

}  // namespace tg::compiler::tx8be
