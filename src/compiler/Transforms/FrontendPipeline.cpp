// --tx8-frontend: the passes that run before the sharding search, in the TX8 back end's order
// (layouts, then constants, then groups).
#include <mlir/Dialect/Func/IR/FuncOps.h>
#include <mlir/Pass/PassRegistry.h>

#include "tilegraph/compiler/Dialect/Tx8be/Transforms/Passes.h"
#include "tilegraph/core/error.h"

namespace tg::compiler::tx8be {

void buildFrontendPipeline(mlir::OpPassManager& pm, const std::string& groupPatternFile) {
  mlir::OpPassManager& layouts = pm.nest<mlir::func::FuncOp>();
  layouts.addPass(createLayoutInitPass());
  layouts.addPass(createLayoutTransmitPass());
  layouts.addPass(createLayoutAlignToNpuPass());
  layouts.addPass(createLayoutAlignOptPass());
  pm.addPass(createMoveConstantPass());
  pm.addPass(createConstNormPass());
  mlir::OpPassManager& groups = pm.nest<mlir::func::FuncOp>();
  std::unique_ptr<mlir::Pass> patterns = createGroupPatternPass();
  if (!groupPatternFile.empty() && mlir::failed(patterns->initializeOptions("pattern-file=" + groupPatternFile))) {
    throw Error("the group pattern file name '" + groupPatternFile + "' is not a pass option value");
  }
  groups.addPass(std::move(patterns));
  groups.addPass(createGroupOptimizationPass());
  groups.addPass(createGroupLdStPass());
  pm.addPass(createGroupMappingPass());
}

void registerFrontendPipeline() {
  mlir::PassPipelineRegistration<>("tx8-frontend",
                                   "The TX8 front end: layout-init, layout-transmit, layout-align-to-npu, "
                                   "layout-align-opt, move-constant, const-norm, group-pattern, "
                                   "group-optimization, group-ldst, group-mapping",
                                   [](mlir::OpPassManager& pm) { buildFrontendPipeline(pm); });
}

}  // namespace tg::compiler::tx8be
