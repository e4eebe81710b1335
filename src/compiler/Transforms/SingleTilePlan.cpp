// The plan compile_graph gives a group until the back-end passes plan it (Codegen.h): the whole
// primary result on the region's first tile in one step, each SPM value in one buffer of its
// whole tensor, the buffers and the ops' scratch placed one after the other.
#include <mlir/IR/BuiltinAttributes.h>
#include <mlir/IR/BuiltinTypes.h>

#include "Codegen.h"
#include "tilegraph/sim/layout.h"

namespace tg::compiler::tx8be {

namespace {

constexpr uint64_t kSpmAlign = 256;  // the 2048-bit SPM port

uint64_t alignUp(uint64_t bytes) { return (bytes + kSpmAlign - 1) / kSpmAlign * kSpmAlign; }

std::array<int64_t, 4> dims4(mlir::Value value) {
  auto shape = value.getType().cast<mlir::RankedTensorType>().getShape();
  std::array<int64_t, 4> dims{1, 1, 1, 1};
  for (size_t i = 0; i < shape.size() && i < 4; ++i) dims[4 - shape.size() + i] = shape[i];
  return dims;
}

// The dense bytes of `value` (the sizes codegen's dense buffers take).
uint64_t denseBytes(mlir::Value value) {
  auto type = value.getType().cast<mlir::RankedTensorType>();
  uint64_t elements = 1;
  for (int64_t d : type.getShape()) elements *= uint64_t(d);
  return elements * uint64_t((type.getElementTypeBitWidth() + 7) / 8);
}

}  // namespace

mlir::LogicalResult writeSingleTilePlan(GroupOp group, uint64_t spm_bytes) {
  if (group.getGroupTag().value_or(0) == 2) return mlir::success();  // works in DDR
  mlir::MLIRContext* context = group->getContext();
  YieldOp yield = group.getYield();
  if (yield->getNumOperands() == 0) return group.emitOpError("yields nothing");
  auto shape = yield->getOperand(0).getType().cast<mlir::RankedTensorType>().getShape();
  group.setShardingAttr(mlir::DenseI32ArrayAttr::get(context, std::vector<int32_t>(shape.size(), 1)));
  group.setSliceAttr(mlir::DenseI64ArrayAttr::get(context, shape));
  group.setStepsAttr(mlir::IntegerAttr::get(mlir::IntegerType::get(context, 64), 1));
  uint64_t offset = 0;
  for (mlir::Operation& op : group.getBodyBlock().without_terminator()) {
    auto load = mlir::dyn_cast<LoadConstOp>(op);
    if (mlir::isa<StoreVarOp>(op) || (load && load.getBypassCodegen().value_or(false))) continue;
    auto dev = op.getAttrOfType<DevAttr>("dev_info");
    const LayoutMode layout = dev ? dev.getMemLayout() : LayoutMode::Tensor;
    const uint64_t buffer = offset;
    offset += alignUp(denseBytes(op.getResult(0)));
    int64_t immAddr = -1;
    const uint64_t imm = codegenImmBytes(&op, dims4(op.getResult(0)));
    if (imm > 0) {
      immAddr = int64_t(offset);
      offset += alignUp(imm);
    }
    auto empty = mlir::DenseI64ArrayAttr::get(context, {});
    op.setAttr("dev_info", DevAttr::get(context, imm, layout, false, 1, empty, empty, dev ? dev.getSourceType() : 0,
                                        immAddr, mlir::DenseI64ArrayAttr::get(context, {int64_t(buffer)})));
  }
  if (offset > spm_bytes) {
    return group.emitOpError("the whole group on one tile needs ")
           << offset << " bytes of SPM, the tile has " << spm_bytes << " (the back-end passes split it)";
  }
  group.setSpmAllocSizeAttr(mlir::IntegerAttr::get(mlir::IntegerType::get(context, 64), int64_t(offset)));
  return mlir::success();
}

}  // namespace tg::compiler::tx8be
