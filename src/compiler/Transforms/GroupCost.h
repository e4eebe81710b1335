#pragma once
// What the group-cost pass (GroupCost.cpp) shares with its tests.
#include <string>

#include "tilegraph/compiler/Dialect/Tx8be/IR/Tx8be.h"

namespace tg::compiler::tx8be {

// The TX8 toolchain's GroupKey: two groups with the same key take the same plan. It is the body's
// structure: each op's name, how its operands connect (block argument i or the result of op j),
// its operand and result types, its attributes but for ids, addresses, constant data and the
// plan itself (the layout, dev_info's mem_layout, are kept), and the group's tag and tile count.
std::string groupKey(GroupOp group);

}  // namespace tg::compiler::tx8be
