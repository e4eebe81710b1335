#include "ChipOption.h"

#include "tilegraph/core/error.h"

namespace tg::compiler::tx8be {

mlir::FailureOr<sim::ChipConfig> chipOption(mlir::ModuleOp module, llvm::StringRef pass, const std::string& path) {
  if (path.empty()) return sim::ChipConfig{};
  try {
    return sim::load_chip_config(path);
  } catch (const Error& e) {
    return module.emitError() << pass << ": " << e.what();
  }
}

}  // namespace tg::compiler::tx8be
