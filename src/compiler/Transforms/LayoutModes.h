#pragma once
// The two forms a tensor takes on the TX8 NPU and the dev_info.mem_layout that records them:
// compact (Tensor, NTensor for a batch) and channel-aligned (Cx, NCx), shared by the layout and
// constant passes.
#include <mlir/IR/Operation.h>

#include "tilegraph/compiler/Dialect/Tx8be/IR/Tx8be.h"

namespace tg::compiler::tx8be {

bool is_aligned(LayoutMode mode);
// The mem_layout of a value of `type` in the aligned or compact form: the N variant when dim 0
// is a batch larger than one.
LayoutMode layout_mode(mlir::Type type, bool aligned);
// The op's dev_info.mem_layout, or the compact form of its result when it has no dev_info.
LayoutMode mem_layout(mlir::Operation* op);
// Sets dev_info.mem_layout, creating a default dev_info when the op has none.
void set_mem_layout(mlir::Operation* op, LayoutMode mode);
// Whether the op's layout_str is still to be decided (absent or "Unknown").
bool layout_unknown(mlir::Operation* op);

}  // namespace tg::compiler::tx8be
