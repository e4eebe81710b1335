#pragma once
// Forms a tx8be.group from ops of one block, for group-pattern and group-optimization.
#include <llvm/ADT/ArrayRef.h>
#include <mlir/IR/Operation.h>

#include "tilegraph/compiler/Dialect/Tx8be/IR/Tx8be.h"

namespace tg::compiler::tx8be {

// Whether `ops` (of one block) can become one group: no value leaves them and comes back
// through ops outside (the group would depend on itself).
bool is_convex(llvm::ArrayRef<mlir::Operation*> ops);

// Whether the op may be put into a group: a compute op other than a constant or load_const
// (those move into the group of their users), not already in a group.
bool is_groupable(mlir::Operation* op);

// Moves `ops` (convex, of one block) into a new group placed at the last of them, with the
// constants and load_consts only they use as dependencies inside. The group's inputs are the
// other values the ops use, its results the values used outside. Call
// mlir::sortTopologically on the block afterwards: users outside that came before the last op
// must move below the group.
GroupOp create_group(llvm::ArrayRef<mlir::Operation*> ops);

}  // namespace tg::compiler::tx8be
