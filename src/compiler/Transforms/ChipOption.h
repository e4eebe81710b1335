#pragma once
// The chip the back-end passes plan for, from their `chip-config` option: the TX8 defaults when
// the option is empty, else the JSON file (docs/sim.md); a file that cannot be read or holds an
// invalid value is a diagnostic on the module naming the pass.
#include <string>

#include <mlir/IR/BuiltinOps.h>
#include <mlir/Support/LogicalResult.h>

#include "tilegraph/sim/chip_config.h"

namespace tg::compiler::tx8be {

mlir::FailureOr<sim::ChipConfig> chipOption(mlir::ModuleOp module, llvm::StringRef pass, const std::string& path);

}  // namespace tg::compiler::tx8be
