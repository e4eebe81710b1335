#pragma once
// The K-split strategy of a lone matmul group (GroupPlan.h, "K split"): what the data split, the
// pipeline, the SPM allocation, the estimate and codegen share about it. A group qualifies when
// its body is two loads (load_var or load_const, each of one operand), the matmul and the store
// of its result, with both operands of one float type (f32, f16, bf16): the NE then accumulates
// the f32 result over K panels itself. The mixed f16 / bf16 x f32 path (which rounds whole
// activation rows into scratch) and q8_0 weights (op_gemm_q8_0 has no accumulation) keep K whole.
//
// The windows of step s on a tile: the result window s / panels of the tile's range (the
// primary result's windows, GroupPlan.h), and of each operand the rows it reads with K cut to
// panel s % panels.
#include <cstdint>
#include <optional>
#include <string>

#include <llvm/ADT/DenseMap.h>
#include <mlir/IR/Value.h>
#include <mlir/Support/LogicalResult.h>

#include "tilegraph/compiler/Dialect/Tx8be/IR/Tx8be.h"
#include "tilegraph/compiler/Dialect/Tx8be/Transforms/GroupPlan.h"
#include "tilegraph/sim/chip_config.h"

namespace tg::compiler::tx8be {

// The ops of a group the K split applies to.
struct PanelMatmul {
  mlir::Operation* lhsLoad = nullptr;  // the weights' (matmul lhs) load
  mlir::Operation* rhsLoad = nullptr;  // the activations' (matmul rhs)
  mlir::Operation* matmul = nullptr;   // lhs, rhs -> the f32 result
  mlir::Operation* store = nullptr;    // of the result
  int64_t k = 0;
};

// The group's ops when it qualifies; else nullopt and, with `why`, the reason.
std::optional<PanelMatmul> panelMatmul(GroupOp group, std::string* why = nullptr);

// The steps of one result window: ceil(K / kPanel).
int64_t panelsOf(const PanelMatmul& m, int64_t kPanel);

// Every value's window at (tile, step) of a K split (empty when the tile has nothing to do then).
llvm::DenseMap<mlir::Value, WindowParam> panelWindows(GroupOp group, const PanelMatmul& m, const DataSplit& split,
                                                      int64_t tile, int64_t step);

// The SPM copies of each buffer: three of each operand panel (a step's loads and NoC transfers run
// up to two steps ahead of the NE), two of the accumulator (the NE fills one while the other is
// stored), fewer when there are fewer steps or windows.
int32_t panelOperandCopies(const DataSplit& split);
int32_t accumulatorCopies(const PanelMatmul& m, const DataSplit& split);

// The data split of a K split: `sharding` of the result over tiles, K in panels of `kPanel`, the
// result window (the slice) halved, batches first, then the larger of its rows and columns, until
// the accumulators and panel buffers fit the SPM. NotSplittable when the group does not qualify or
// the sharding leaves a tile empty.
PlanStatus panelSplit(GroupOp group, llvm::ArrayRef<int32_t> sharding, int64_t kPanel, bool shareOperands,
                      const sim::ChipConfig& chip, DataSplit& split);

// The pipeline of a K split: the loads of step s in cycle s, its matmul in the next cycle, and
// after a result window's last panel its store in the cycle after that.
Pipeline panelPipeline(const PanelMatmul& m, const DataSplit& split);

// The K panels group-cost tries for a qualifying group.
inline constexpr int64_t kPanelCandidates[] = {128, 256, 512};

}  // namespace tg::compiler::tx8be
