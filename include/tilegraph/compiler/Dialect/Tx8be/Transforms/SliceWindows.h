#pragma once
// The windows of a data split (GroupPlan.h, "Windows"): which part of the primary result tile t
// computes in step s, and the window of every other value of the group body that it reads. The
// data split sizes its buffers with these, and codegen addresses its loads, stores and op calls
// with them, so both see the same windows.
//
// Tiles are numbered over the sharding grid row-major (the innermost dimension fastest), and so
// are a tile's steps over its range. Parts are ceil(extent / parts) long, the last one shorter;
// a tile's steps walk its range in `slice`-shaped windows, the last ones along a dimension
// shorter, and on a tile whose range is shorter than tile 0's the steps past its end are empty
// (size 0 in some dimension): every tile runs `steps` steps, some of them doing nothing.
#include <cstdint>
#include <vector>

#include <llvm/ADT/DenseMap.h>
#include <mlir/IR/Value.h>
#include <mlir/Support/LogicalResult.h>

#include "tilegraph/compiler/Dialect/Tx8be/IR/Tx8be.h"

namespace tg::compiler::tx8be {

// Tile `tile`'s range of a tensor of `shape` cut in `sharding` parts per dimension.
WindowParam tileRange(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int32_t> sharding, int64_t tile);
// The steps a tile takes per dimension to walk a range of `extent` in `slice` windows.
std::vector<int64_t> stepsPerDim(llvm::ArrayRef<int64_t> extent, llvm::ArrayRef<int64_t> slice);
// The window of step `step` in tile `tile`'s range (empty past the range's end).
WindowParam primaryWindow(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int32_t> sharding,
                          llvm::ArrayRef<int64_t> slice, int64_t tile, int64_t step);
bool isEmpty(const WindowParam& window);

// The value the group's split is stated for: the first value the body yields.
mlir::Value primaryValue(GroupOp group);

// Every value of the group's body (block arguments and op results) with the window of it that
// computing `primary` of the primary result reads: the primary result's window is `primary`,
// every other value's the bounding box of what its users' ShardingInterface::backWindow ask of
// it (another result of the group of the primary result's shape takes `primary` too; one of
// another shape is taken whole). A value nothing reads has no entry. Fails (with a diagnostic)
// when an op's backWindow gives no window for one of its operands.
mlir::FailureOr<llvm::DenseMap<mlir::Value, WindowParam>> bodyWindows(GroupOp group, const WindowParam& primary);

}  // namespace tg::compiler::tx8be
