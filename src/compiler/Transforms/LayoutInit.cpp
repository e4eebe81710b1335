// layout-init (Passes.td): the layouts that follow from an op's kind alone, as the TX8 back end's
// layout initialization gives gemm and convolution theirs; layout-transmit spreads them.
#include <mlir/Pass/Pass.h>

#include "tilegraph/compiler/Dialect/Tx8be/Transforms/Passes.h"

namespace tg::compiler::tx8be {

#define GEN_PASS_CLASSES
#include "tilegraph/compiler/Dialect/Tx8be/Transforms/Passes.h.inc"

namespace {

// Tensor, or NTensor when dim 0 is a batch larger than one.
std::string tensor_layout(mlir::Type type) {
  auto shaped = type.dyn_cast<mlir::RankedTensorType>();
  return shaped && shaped.getRank() > 0 && shaped.getDimSize(0) != 1 ? "NTensor" : "Tensor";
}

std::string join(llvm::ArrayRef<std::string> parts) {
  std::string joined;
  for (const std::string& part : parts) joined += (joined.empty() ? "" : "-") + part;
  return joined;
}

struct LayoutInitPass : public LayoutInitBase<LayoutInitPass> {
  LayoutInitPass() = default;

  // The layout of `op` from its kind, or "" for an op whose layout comes from its neighbours.
  std::string initial_layout(mlir::Operation* op) const {
    const std::string feature = nhwc ? "NHWC" : "NCHW";
    const std::string weight = nhwc ? "HWOI" : "OIHW";
    auto is_4d = [](mlir::Value v) { return v.getType().cast<mlir::RankedTensorType>().getRank() == 4; };
    std::vector<std::string> parts;
    if (mlir::isa<MatMulOp, AttentionOp>(op)) {
      for (mlir::Value operand : op->getOperands()) parts.push_back(tensor_layout(operand.getType()));
    } else if (mlir::isa<Conv2dOp>(op)) {
      parts = {feature, weight};
    } else if (mlir::isa<BatchNormInferenceOp, Pool2dOp>(op)) {
      // The feature map, then batchnorm's per-channel vectors.
      if (!is_4d(op->getOperand(0))) return "";
      parts.push_back(feature);
      for (mlir::Value operand : op->getOperands().drop_front()) parts.push_back(tensor_layout(operand.getType()));
    } else {
      return "";
    }
    parts.push_back(mlir::isa<MatMulOp, AttentionOp>(op) ? tensor_layout(op->getResult(0).getType()) : feature);
    return join(parts);
  }

  void runOnOperation() override {
    getOperation().walk([&](mlir::Operation* op) {
      auto layout = op->getAttrOfType<mlir::StringAttr>("layout_str");
      if (layout && layout.getValue() != "Unknown") return;
      const std::string initial = initial_layout(op);
      if (!initial.empty()) op->setAttr("layout_str", mlir::StringAttr::get(op->getContext(), initial));
    });
  }
};

}  // namespace

std::unique_ptr<mlir::Pass> createLayoutInitPass() { return std::make_unique<LayoutInitPass>(); }

}  // namespace tg::compiler::tx8be
