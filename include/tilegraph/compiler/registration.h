#pragma once
// What a tool needs to read and transform tx8be modules: the dialects it must register (tx8be
// and func) and the passes (every pass in Passes.td, through the pass registry).
#include <mlir/IR/DialectRegistry.h>

namespace tg::compiler {

void register_dialects(mlir::DialectRegistry& registry);
// Idempotent: registers the passes once per process.
void register_passes();

}  // namespace tg::compiler
