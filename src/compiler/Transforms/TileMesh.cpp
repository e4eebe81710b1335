#include "TileMesh.h"

#include <mlir/IR/BuiltinAttributes.h>

namespace tg::compiler::tx8be {

mlir::FailureOr<TileMesh> tile_mesh(mlir::ModuleOp module) {
  TileMesh mesh;
  for (auto [name, size] : {std::pair{"tx8be.tile_dx", &mesh.dx}, std::pair{"tx8be.tile_dy", &mesh.dy}}) {
    mlir::Attribute attr = module->getAttr(name);
    if (!attr) continue;
    auto value = attr.dyn_cast<mlir::IntegerAttr>();
    if (!value || value.getInt() < 1 || value.getInt() > 1024) {
      return module.emitError() << name << " must be a positive number of tiles, got " << attr;
    }
    *size = int32_t(value.getInt());
  }
  return mesh;
}

}  // namespace tg::compiler::tx8be
