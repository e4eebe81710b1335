// const-norm (Passes.td): a constant is converted once, when it is loaded, rather than by a
// channel_norm after the load; and the load_consts of one constant agree on its layout, the
// aligned one winning, as the TX8 back end's constant normalization does.
#include <mlir/IR/Builders.h>
#include <mlir/Pass/Pass.h>

#include "LayoutModes.h"
#include "tilegraph/compiler/Dialect/Tx8be/Transforms/Passes.h"

namespace tg::compiler::tx8be {

#define GEN_PASS_CLASSES
#include "tilegraph/compiler/Dialect/Tx8be/Transforms/Passes.h.inc"

namespace {

// load_const -> channel_norm (its only user): the constant is loaded in the converted layout.
void fold_conversions(mlir::ModuleOp module) {
  llvm::SmallVector<ChannelNormOp> folded;
  module.walk([&](LoadConstOp load) {
    if (!load->hasOneUse()) return;
    if (auto norm = mlir::dyn_cast<ChannelNormOp>(*load->getUsers().begin())) {
      set_mem_layout(load, mem_layout(norm));
      norm.getOutput().replaceAllUsesWith(load.getOutput());
      folded.push_back(norm);
    }
  });
  for (ChannelNormOp norm : folded) norm->erase();
}

// The load_consts of one constant take one layout: the aligned one if any of them has it. A
// load whose layout changes keeps what its users saw through a channel_norm back.
void unify_layouts(mlir::ModuleOp module) {
  std::map<int64_t, llvm::SmallVector<LoadConstOp>> by_id;
  module.walk([&](LoadConstOp load) { by_id[load.getConstMapIdAttr().getInt()].push_back(load); });
  for (auto& [id, loads] : by_id) {
    if (loads.size() < 2) continue;
    LayoutMode layout = mem_layout(loads.front());
    for (LoadConstOp load : loads) {
      if (is_aligned(mem_layout(load))) {
        layout = mem_layout(load);
        break;
      }
    }
    for (LoadConstOp load : loads) {
      const LayoutMode before = mem_layout(load);
      if (before == layout) continue;
      set_mem_layout(load, layout);
      mlir::OpBuilder builder(load->getContext());
      builder.setInsertionPointAfter(load);
      auto back =
          builder.create<ChannelNormOp>(load.getLoc(), mlir::TypeRange{load.getOutput().getType()},
                                        mlir::ValueRange{load.getOutput()}, llvm::ArrayRef<mlir::NamedAttribute>{});
      back->setAttr("layout_str", load.getLayoutStrAttr());
      set_mem_layout(back, before);
      load.getOutput().replaceAllUsesExcept(back.getOutput(), back);
    }
  }
}

struct ConstNormPass : public ConstNormBase<ConstNormPass> {
  void runOnOperation() override {
    fold_conversions(getOperation());
    unify_layouts(getOperation());
  }
};

}  // namespace

std::unique_ptr<mlir::Pass> createConstNormPass() { return std::make_unique<ConstNormPass>(); }

}  // namespace tg::compiler::tx8be
