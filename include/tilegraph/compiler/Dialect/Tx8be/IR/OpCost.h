#pragma once
// What the sharding search asks of an op: the clock cycles and scratch (imm) SPM of one slice of
// it on one TX8 tile. The numbers come from the TX8 C-model's op library (tilegraph/sim/oplib:
// each `<op>_cost` runs the op on a one-tile chip) where it has the op, and from the documented
// formula of src/compiler/cost_model.h where it does not (pool2d, gelu_erf, reshape, view,
// concat, broadcast, set_rows, quantized operands other than q8_0, slices larger than an SPM).
// The OpLibInterface's getOpClockCycle / getImmSpSize are the query of the whole output on the
// default chip.
#include <cstdint>

#include <llvm/ADT/ArrayRef.h>

namespace mlir {
class Operation;
}
namespace tg::sim {
struct ChipConfig;
}

namespace tg::compiler::tx8be {

enum class CostSource {
  OpLib,    // the C-model's op library ran the slice
  Estimate  // the formula of cost_model.h
};

struct OpCostQuery {
  uint64_t cycles = 0;    // the slice's instructions on one tile, each as if alone
  uint64_t immBytes = 0;  // scratch SPM besides the operands
  CostSource source = CostSource::Estimate;
};

// The cost of computing the output slice of shape `outputSliceShape` (outermost first, the
// result's rank; each size at most the result's); the operands' slices are those the op's
// ShardingInterface::temporalSliceShape gives. Memoised per op signature, slice and chip, so the
// search may ask the same shape again at no cost. Throws tg::Error for a slice the op cannot be
// cut to (a rank other than the result's, a size out of range, a cut the op refuses).
OpCostQuery queryOpCost(mlir::Operation* op, llvm::ArrayRef<int64_t> outputSliceShape, const sim::ChipConfig& config);
// The whole output.
OpCostQuery queryOpCost(mlir::Operation* op, const sim::ChipConfig& config);

}  // namespace tg::compiler::tx8be
