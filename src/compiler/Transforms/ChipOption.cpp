#include "ChipOption.h"

#include <mlir/IR/Builders.h>
#include <mlir/IR/BuiltinAttributes.h>
#include <nlohmann/json.hpp>

#include "TileMesh.h"
#include "tilegraph/core/error.h"

namespace tg::compiler::tx8be {

namespace {
constexpr llvm::StringLiteral kChipAttr = "tx8be.chip";
}

mlir::FailureOr<sim::ChipConfig> chipOption(mlir::ModuleOp module, llvm::StringRef pass, const std::string& path) {
  sim::ChipConfig chip;
  try {
    if (mlir::Attribute attr = module->getAttr(kChipAttr)) {
      auto text = attr.dyn_cast<mlir::StringAttr>();
      if (!text) return module.emitError() << pass << ": " << kChipAttr << " must be a string of JSON, got " << attr;
      const nlohmann::json json = nlohmann::json::parse(text.getValue().str(), nullptr, false);
      if (json.is_discarded()) return module.emitError() << pass << ": " << kChipAttr << " is not JSON";
      chip = sim::chip_config_from_json(json);
    }
    if (!path.empty()) chip = sim::load_chip_config(path);
    if (module->hasAttr("tx8be.tile_dx") || module->hasAttr("tx8be.tile_dy")) {
      mlir::FailureOr<TileMesh> mesh = tile_mesh(module);
      if (mlir::failed(mesh)) return mlir::failure();
      chip.mesh_x = mesh->dx;
      chip.mesh_y = mesh->dy;
      chip.validate();
    }
  } catch (const Error& e) {
    return module.emitError() << pass << ": " << e.what();
  }
  return chip;
}

void setModuleChip(mlir::ModuleOp module, const sim::ChipConfig& chip) {
  mlir::Builder builder(module.getContext());
  module->setAttr(kChipAttr, builder.getStringAttr(sim::to_json(chip).dump()));
  module->setAttr("tx8be.tile_dx", builder.getI32IntegerAttr(chip.mesh_x));
  module->setAttr("tx8be.tile_dy", builder.getI32IntegerAttr(chip.mesh_y));
}

}  // namespace tg::compiler::tx8be
