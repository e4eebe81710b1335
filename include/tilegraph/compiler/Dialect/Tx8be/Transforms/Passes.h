#pragma once
// The tx8be passes (Passes.td) and their registration with the pass registry (tilegraph-opt's
// flags and --pass-pipeline names).
#include <memory>
#include <string>

#include <mlir/IR/BuiltinOps.h>
#include <mlir/Pass/Pass.h>
#include <mlir/Pass/PassManager.h>

#include "tilegraph/compiler/Dialect/Tx8be/IR/Tx8be.h"
#include "tilegraph/compiler/Dialect/Tx8be/Transforms/ConstContainer.h"
#include "tilegraph/compiler/group_plan_memo.h"

namespace tg::compiler::tx8be {

std::unique_ptr<mlir::Pass> createInferShapesPass();
std::unique_ptr<mlir::Pass> createLayoutInitPass();
std::unique_ptr<mlir::Pass> createLayoutTransmitPass();
std::unique_ptr<mlir::Pass> createLayoutAlignToNpuPass();
std::unique_ptr<mlir::Pass> createLayoutAlignOptPass();
std::unique_ptr<mlir::Pass> createMoveConstantPass();
// The same, handing the container it builds to `container` (which must outlive the pass).
std::unique_ptr<mlir::Pass> createMoveConstantPass(ConstContainer* container);
std::unique_ptr<mlir::Pass> createConstNormPass();
std::unique_ptr<mlir::Pass> createGroupPatternPass();
std::unique_ptr<mlir::Pass> createGroupOptimizationPass();
std::unique_ptr<mlir::Pass> createGroupLdStPass();
std::unique_ptr<mlir::Pass> createGroupMappingPass();
std::unique_ptr<mlir::Pass> createDataSplitPass();
std::unique_ptr<mlir::Pass> createEstimatePass();
std::unique_ptr<mlir::Pass> createGroupCostPass();
// The same, handing what it did to `counts` (which must outlive the pass; the pass also counts
// it in MLIR pass statistics (--mlir-pass-statistics), which count only where LLVM's statistics
// are enabled, not in Debian's release LLVM), and planning with `memo` (group_plan_memo.h) when
// given: plans of identical groups other compiles searched with it are taken, not searched again;
// `kSplit` says whether a lone matmul's K is split (group_plan_memo.h).
using compiler::GroupCostCounts;
using compiler::MatmulKSplit;
std::unique_ptr<mlir::Pass> createGroupCostPass(GroupCostCounts* counts, std::shared_ptr<GroupPlanMemo> memo = nullptr,
                                                MatmulKSplit kSplit = MatmulKSplit::Search);
std::unique_ptr<mlir::Pass> createCodegenPass();

// The front-end pipeline (--tx8-frontend): the passes above from layout-init to group-mapping,
// in order, on a module; group-pattern also reads `groupPatternFile` when it is not empty.
void buildFrontendPipeline(mlir::OpPassManager& pm, const std::string& groupPatternFile = "");
// Registers --tx8-frontend with the pass registry.
void registerFrontendPipeline();

std::unique_ptr<mlir::Pass> createSwPipelinePass();
std::unique_ptr<mlir::Pass> createSpmAllocPass();
std::unique_ptr<mlir::Pass> createOptBarrierPass();
std::unique_ptr<mlir::Pass> createOptDdrPass();

// The back-end pipeline (--tx8-backend): group-cost, sw-pipeline, spm-alloc, opt-barrier,
// opt-ddr on a module the front end grouped; --tx8-pipeline is the front end and then it.
// compile_graph's: group-cost counting into `counts` and planning with `memo` (either may be null)
// and `kSplit`.
void buildBackendPipeline(mlir::OpPassManager& pm, GroupCostCounts* counts = nullptr,
                          std::shared_ptr<GroupPlanMemo> memo = nullptr, MatmulKSplit kSplit = MatmulKSplit::Search);
// Registers --tx8-backend and --tx8-pipeline with the pass registry.
void registerBackendPipeline();

#define GEN_PASS_REGISTRATION
#include "tilegraph/compiler/Dialect/Tx8be/Transforms/Passes.h.inc"

}  // namespace tg::compiler::tx8be
