#pragma once
// The lifetimes of a group's SPM buffers over its pipeline cycles (the TX8 toolchain's
// SA_BufferLife and SA_BufferMerge), which the SPM allocation (SpmAlloc.cpp) places.
#include <cstdint>
#include <vector>

#include <mlir/IR/Operation.h>
#include <mlir/IR/Value.h>

#include "IntervalPlacement.h"
#include "tilegraph/compiler/Dialect/Tx8be/Transforms/GroupPlan.h"

namespace tg::compiler::tx8be {

// Every SPM buffer starts on this boundary and is a multiple of it (the sim's SpmArena).
inline constexpr uint64_t kSpmAlign = 256;

// One buffer: a value's (the first producer of an in-place chain names it) or an op's scratch.
struct BufferLife {
  mlir::Value value;  // null for scratch
  mlir::Operation* scratchOf = nullptr;
  std::vector<mlir::Value> members;     // the values of its in-place chain, in body order
  uint64_t bytes = 0;                   // one copy, a multiple of kSpmAlign
  int32_t copies = 1;                   // steps whose copies are live at once
  std::vector<LiveInterval> intervals;  // in pipeline cycles, merged (SA_BufferMerge: mergeLifetimes)
  uint64_t footprint() const { return bytes * uint64_t(copies); }
};

// SA_BufferLife: for each value of the body that sits in SPM (loaded, computed; not a block
// argument, a store's DDR result or a DDR-to-DDR move's), the cycles from the producing item to
// its last consumer, per step; an in-place op (OpAttr::memInplace) extends its operand's buffer
// instead of starting one; each op's scratch lives in the cycles the op runs in.
std::vector<BufferLife> bufferLives(GroupOp group, const DataSplit& split, const Pipeline& pipeline);

}  // namespace tg::compiler::tx8be
