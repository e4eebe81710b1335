// --tx8-backend: the passes that plan the groups, in the TX8 back end's order (the sharding
// search, software pipeline, SPM allocation, then the program-wide barriers and DDR placement);
// --tx8-pipeline: the front end and then the back end.
#include <mlir/Dialect/Func/IR/FuncOps.h>
#include <mlir/Pass/PassRegistry.h>

#include "tilegraph/compiler/Dialect/Tx8be/Transforms/Passes.h"

namespace tg::compiler::tx8be {

void buildBackendPipeline(mlir::OpPassManager& pm, GroupCostCounts* counts, std::shared_ptr<GroupPlanMemo> memo,
                          MatmulKSplit kSplit) {
  pm.addPass(createGroupCostPass(counts, std::move(memo), kSplit));
  mlir::OpPassManager& groups = pm.nest<mlir::func::FuncOp>();
  groups.addPass(createSwPipelinePass());
  groups.addPass(createSpmAllocPass());
  groups.addPass(createOptBarrierPass());
  pm.addPass(createOptDdrPass());
}

void registerBackendPipeline() {
  mlir::PassPipelineRegistration<>("tx8-backend",
                                   "The TX8 back end: group-cost, sw-pipeline, spm-alloc, opt-barrier, opt-ddr",
                                   [](mlir::OpPassManager& pm) { buildBackendPipeline(pm); });
  mlir::PassPipelineRegistration<>("tx8-pipeline",
                                   "The TX8 front end (--tx8-frontend), then the back end (--tx8-backend)",
                                   [](mlir::OpPassManager& pm) {
                                     buildFrontendPipeline(pm);
                                     buildBackendPipeline(pm);
                                   });
}

}  // namespace tg::compiler::tx8be
