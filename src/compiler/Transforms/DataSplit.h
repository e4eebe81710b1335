#pragma once
// What the data split (DataSplit.cpp) shares with the search beside GroupPlan.h's dataSplit.
#include <cstdint>

#include "tilegraph/compiler/Dialect/Tx8be/Transforms/GroupPlan.h"

namespace tg::compiler::tx8be {

// The SPM bytes a split's buffers need on one tile, as the data split sizes them: every value
// held in SPM at its slice, twice when its window changes from step to step (the next step's
// copy is filled while this one is used), once when it is step-invariant, plus each op's
// scratch scaled to its result's slice. An upper bound of what the SPM allocation places (it
// reuses space between buffers whose lives do not overlap).
uint64_t spmBytesNeeded(const DataSplit& split);

// Whether a value of the body sits in SPM: every op result except a store's (in DDR) and a
// constant the consumer reads in DDR (bypass_codegen).
bool heldInSpm(mlir::Value value);

}  // namespace tg::compiler::tx8be
