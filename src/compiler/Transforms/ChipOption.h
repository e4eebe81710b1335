#pragma once
// The chip the back-end passes plan for. compile_graph writes the chip of its CompileOptions into
// the module (setModuleChip: the configuration as JSON in tx8be.chip, its mesh in tx8be.tile_dx /
// tx8be.tile_dy), so every pass of the pipeline plans for that chip rather than a default one. A
// pass's `chip-config` option (a JSON file, docs/sim.md) overrides it, as for a module written by
// hand; with neither, the TX8 chip's defaults. The module's tile_dx / tile_dy, where present, are
// the mesh: the groups' dev_regions were cut from it. A file that cannot be read, or an invalid
// configuration (tx8be.chip's too, when the option is given), is a diagnostic on the module
// naming the pass.
#include <string>

#include <mlir/IR/BuiltinOps.h>
#include <mlir/Support/LogicalResult.h>

#include "tilegraph/sim/chip_config.h"

namespace tg::compiler::tx8be {

mlir::FailureOr<sim::ChipConfig> chipOption(mlir::ModuleOp module, llvm::StringRef pass, const std::string& path);

void setModuleChip(mlir::ModuleOp module, const sim::ChipConfig& chip);

}  // namespace tg::compiler::tx8be
