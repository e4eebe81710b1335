#pragma once
// What the data split (DataSplit.cpp) shares with the search beside GroupPlan.h's dataSplit.
#include <cstdint>

#include "tilegraph/compiler/Dialect/Tx8be/Transforms/GroupPlan.h"

namespace tg::compiler::tx8be {

// The SPM bytes a split's buffers need on one tile, as the data split sizes them: every value
// held in SPM at its slice, twice when its window changes from step to step (the next step's
// copy is filled while this one is used), once when it is step-invariant, plus each op's
// scratch for its slice (queryOpCost, OpCost.h). The SPM allocation, which reuses space between
// buffers whose lives do not overlap and aligns each to 256 bytes, decides whether a plan fits.
uint64_t spmBytesNeeded(const DataSplit& split, const sim::ChipConfig& chip);

}  // namespace tg::compiler::tx8be
