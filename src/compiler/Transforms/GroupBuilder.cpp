#include "GroupBuilder.h"

#include <llvm/ADT/SetVector.h>
#include <llvm/ADT/SmallPtrSet.h>
#include <mlir/IR/Builders.h>

namespace tg::compiler::tx8be {

namespace {

bool is_constant(mlir::Operation* op) { return mlir::isa<ConstantOp, LoadConstOp>(op); }

// The ancestor of `op` in `block` (op itself when it is there), or null.
mlir::Operation* in_block(mlir::Operation* op, mlir::Block* block) { return block->findAncestorOpInBlock(*op); }

}  // namespace

bool is_groupable(mlir::Operation* op) {
  return mlir::isa<ComputeInterface>(op) && !is_constant(op) && !op->getParentOfType<GroupOp>();
}

bool is_convex(llvm::ArrayRef<mlir::Operation*> ops) {
  if (ops.empty()) return true;
  mlir::Block* block = ops.front()->getBlock();
  llvm::SmallPtrSet<mlir::Operation*, 8> members(ops.begin(), ops.end());
  mlir::Operation* last = ops.front();
  for (mlir::Operation* op : ops) {
    if (last->isBeforeInBlock(op)) last = op;
  }
  // Search forwards from the members' outside users; ops after the last member cannot lead back.
  llvm::SmallVector<mlir::Operation*> stack;
  llvm::SmallPtrSet<mlir::Operation*, 16> seen;
  auto push_users = [&](mlir::Operation* op) {
    for (mlir::Operation* user : op->getUsers()) {
      mlir::Operation* outer = in_block(user, block);
      if (outer && !members.count(outer) && !last->isBeforeInBlock(outer) && seen.insert(outer).second) {
        stack.push_back(outer);
      }
    }
  };
  for (mlir::Operation* op : ops) push_users(op);
  while (!stack.empty()) {
    mlir::Operation* op = stack.pop_back_val();
    for (mlir::Operation* user : op->getUsers()) {
      if (mlir::Operation* outer = in_block(user, block); outer && members.count(outer)) return false;
    }
    push_users(op);
  }
  return true;
}

GroupOp create_group(llvm::ArrayRef<mlir::Operation*> ops) {
  llvm::SmallPtrSet<mlir::Operation*, 8> members(ops.begin(), ops.end());
  // Constants used only by the members become dependencies inside the group.
  for (mlir::Operation* op : ops) {
    for (mlir::Value operand : op->getOperands()) {
      mlir::Operation* producer = operand.getDefiningOp();
      if (!producer || !is_constant(producer) || producer->getBlock() != op->getBlock()) continue;
      if (llvm::all_of(producer->getUsers(), [&](mlir::Operation* user) { return members.count(user) != 0; })) {
        members.insert(producer);
      }
    }
  }
  llvm::SmallVector<mlir::Operation*> ordered(members.begin(), members.end());
  llvm::sort(ordered, [](mlir::Operation* a, mlir::Operation* b) { return a->isBeforeInBlock(b); });
  llvm::SetVector<mlir::Value> inputs;
  llvm::SetVector<mlir::Value> outputs;
  for (mlir::Operation* op : ordered) {
    for (mlir::Value operand : op->getOperands()) {
      mlir::Operation* producer = operand.getDefiningOp();
      if (!producer || !members.count(producer)) inputs.insert(operand);
    }
    for (mlir::Value result : op->getResults()) {
      if (llvm::any_of(result.getUsers(), [&](mlir::Operation* user) { return !members.count(user); })) {
        outputs.insert(result);
      }
    }
  }
  mlir::Operation* last = ordered.back();
  mlir::OpBuilder builder(last->getContext());
  builder.setInsertionPointAfter(last);
  llvm::SmallVector<mlir::Type> result_types;
  for (mlir::Value output : outputs) result_types.push_back(output.getType());
  auto group = builder.create<GroupOp>(last->getLoc(), result_types, inputs.getArrayRef());
  mlir::Block& body = group.getBodyBlock();
  for (mlir::Operation* op : ordered) op->moveBefore(&body, body.end());
  for (unsigned i = 0; i < inputs.size(); ++i) {
    mlir::Value input = inputs[i];
    mlir::Value argument = body.getArgument(i);
    input.replaceUsesWithIf(argument, [&](mlir::OpOperand& use) { return group->isProperAncestor(use.getOwner()); });
  }
  builder.setInsertionPointToEnd(&body);
  builder.create<YieldOp>(last->getLoc(), outputs.getArrayRef());
  for (unsigned i = 0; i < outputs.size(); ++i) {
    mlir::Value output = outputs[i];
    mlir::Value result = group.getResult(i);
    output.replaceUsesWithIf(result, [&](mlir::OpOperand& use) { return !group->isAncestor(use.getOwner()); });
  }
  return group;
}

}  // namespace tg::compiler::tx8be
