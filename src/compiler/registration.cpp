#include "tilegraph/compiler/registration.h"

#include <mlir/Dialect/Func/IR/FuncOps.h>

#include "tilegraph/compiler/Dialect/Tx8be/IR/Tx8be.h"
#include "tilegraph/compiler/Dialect/Tx8be/Transforms/Passes.h"

namespace tg::compiler {

void register_dialects(mlir::DialectRegistry& registry) {
  registry.insert<tx8be::Tx8beDialect, mlir::func::FuncDialect>();
}

void register_passes() {
  static const bool registered = [] {
    tx8be::registerTx8bePasses();
    tx8be::registerFrontendPipeline();
    tx8be::registerBackendPipeline();
    return true;
  }();
  (void)registered;
}

}  // namespace tg::compiler
