#include "LayoutModes.h"

namespace tg::compiler::tx8be {

bool is_aligned(LayoutMode mode) { return mode == LayoutMode::Cx || mode == LayoutMode::NCx; }

LayoutMode layout_mode(mlir::Type type, bool aligned) {
  auto shaped = type.dyn_cast<mlir::RankedTensorType>();
  // A vector has no batch dimension.
  const bool batch = shaped && shaped.getRank() > 1 && shaped.getDimSize(0) != 1;
  if (aligned) return batch ? LayoutMode::NCx : LayoutMode::Cx;
  return batch ? LayoutMode::NTensor : LayoutMode::Tensor;
}

LayoutMode mem_layout(mlir::Operation* op) {
  if (auto dev = op->getAttrOfType<DevAttr>("dev_info")) return dev.getMemLayout();
  return layout_mode(op->getResult(0).getType(), false);
}

void set_mem_layout(mlir::Operation* op, LayoutMode mode) {
  auto dev = op->getAttrOfType<DevAttr>("dev_info");
  op->setAttr("dev_info", dev ? dev.withLayout(mode) : DevAttr::getWithLayout(op->getContext(), mode));
}

bool layout_unknown(mlir::Operation* op) {
  auto layout = op->getAttrOfType<mlir::StringAttr>("layout_str");
  return !layout || layout.getValue() == "Unknown";
}

}  // namespace tg::compiler::tx8be
