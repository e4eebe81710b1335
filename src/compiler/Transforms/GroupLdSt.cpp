// group-ldst (Passes.td): makes a group's traffic with DDR explicit, a load_var for each input
// its ops load into SPM and a store_var for each result they store, and tags the group for the
// sharding search (group_tag 0) or as working in DDR (2), as the TX8 back end does.
#include <mlir/IR/Builders.h>
#include <mlir/Pass/Pass.h>

#include "GroupTags.h"
#include "tilegraph/compiler/Dialect/Tx8be/Transforms/Passes.h"

namespace tg::compiler::tx8be {

#define GEN_PASS_CLASSES
#include "tilegraph/compiler/Dialect/Tx8be/Transforms/Passes.h.inc"

namespace {

bool bit(uint64_t mask, unsigned index) { return index < 64 && (mask >> index & 1); }

// Gives a load or store the layout of the value's producer: its result layout and dev_info.
void copy_layout(mlir::Operation* from, mlir::Operation* to) {
  if (!from) return;
  if (auto layout = from->getAttrOfType<mlir::StringAttr>("layout_str")) {
    const std::string result = layout_component(layout.getValue(), from->getNumOperands(), from->getNumOperands());
    if (!result.empty()) to->setAttr("layout_str", mlir::StringAttr::get(to->getContext(), result));
  }
  if (mlir::Attribute dev = from->getAttr("dev_info")) to->setAttr("dev_info", dev);
}

// Inserts the loads and stores of `group`; returns whether there were any.
bool insert_loads_and_stores(GroupOp group) {
  mlir::Block& body = group.getBodyBlock();
  mlir::OpBuilder builder(group->getContext());
  bool any = false;
  for (mlir::BlockArgument argument : body.getArguments()) {
    llvm::SmallVector<mlir::OpOperand*> loaded;
    for (mlir::OpOperand& use : argument.getUses()) {
      auto lib = mlir::dyn_cast<OpLibInterface>(use.getOwner());
      if (lib && bit(lib.queryOpAttr().needLoad, use.getOperandNumber())) loaded.push_back(&use);
    }
    if (loaded.empty()) continue;
    builder.setInsertionPointToStart(&body);
    auto load = builder.create<LoadVarOp>(group.getLoc(), mlir::TypeRange{argument.getType()},
                                          mlir::ValueRange{argument}, llvm::ArrayRef<mlir::NamedAttribute>{});
    copy_layout(producer_across_regions(group.getInputs()[argument.getArgNumber()]), load);
    for (mlir::OpOperand* use : loaded) use->set(load.getOutput());
    any = true;
  }
  YieldOp yield = group.getYield();
  for (mlir::OpOperand& yielded : yield->getOpOperands()) {
    mlir::OpResult result = yielded.get().dyn_cast<mlir::OpResult>();
    auto lib = result ? mlir::dyn_cast<OpLibInterface>(result.getOwner()) : OpLibInterface();
    if (!lib || !bit(lib.queryOpAttr().needStore, result.getResultNumber())) continue;
    builder.setInsertionPoint(yield);
    auto store = builder.create<StoreVarOp>(group.getLoc(), mlir::TypeRange{result.getType()}, mlir::ValueRange{result},
                                            llvm::ArrayRef<mlir::NamedAttribute>{});
    copy_layout(result.getOwner(), store);
    yielded.set(store.getOutput());
    any = true;
  }
  return any;
}

struct GroupLdStPass : public GroupLdStBase<GroupLdStPass> {
  void runOnOperation() override {
    getOperation().walk([&](GroupOp group) {
      if (group.getGroupTagAttr()) return;  // done already
      const bool moves = insert_loads_and_stores(group);
      group.setGroupTagAttr(
          mlir::IntegerAttr::get(mlir::IntegerType::get(&getContext(), 32), moves ? kGroupTagSplit : kGroupTagInDdr));
    });
  }
};

}  // namespace

std::unique_ptr<mlir::Pass> createGroupLdStPass() { return std::make_unique<GroupLdStPass>(); }

}  // namespace tg::compiler::tx8be
