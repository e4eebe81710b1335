#pragma once
// The tx8be passes (Passes.td) and their registration with the pass registry (tilegraph-opt's
// flags and --pass-pipeline names).
#include <memory>

#include <mlir/Pass/Pass.h>

#include "tilegraph/compiler/Dialect/Tx8be/IR/Tx8be.h"

namespace tg::compiler::tx8be {

std::unique_ptr<mlir::Pass> createInferShapesPass();

#define GEN_PASS_REGISTRATION
#include "tilegraph/compiler/Dialect/Tx8be/Transforms/Passes.h.inc"

}  // namespace tg::compiler::tx8be
