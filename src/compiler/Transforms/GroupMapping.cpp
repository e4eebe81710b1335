// group-mapping (Passes.td): places every group on the module's tile mesh. As the TX8 back end's
// simple mapping, each group runs on the whole mesh; groups are numbered in program order.
#include <mlir/Pass/Pass.h>

#include "TileMesh.h"
#include "tilegraph/compiler/Dialect/Tx8be/Transforms/Passes.h"

namespace tg::compiler::tx8be {

#define GEN_PASS_CLASSES
#include "tilegraph/compiler/Dialect/Tx8be/Transforms/Passes.h.inc"

namespace {

struct GroupMappingPass : public GroupMappingBase<GroupMappingPass> {
  void runOnOperation() override {
    const mlir::FailureOr<TileMesh> mesh = tile_mesh(getOperation());
    if (mlir::failed(mesh)) return signalPassFailure();
    auto region = RegionAttr::get(&getContext(), 0, 0, mesh->dx, mesh->dy);
    int32_t next_id = 0;
    getOperation().walk<mlir::WalkOrder::PreOrder>([&](GroupOp group) {
      group.setDevRegionAttr(region);
      group.setGroupIdAttr(mlir::IntegerAttr::get(mlir::IntegerType::get(&getContext(), 32), next_id++));
    });
  }
};

}  // namespace

std::unique_ptr<mlir::Pass> createGroupMappingPass() { return std::make_unique<GroupMappingPass>(); }

}  // namespace tg::compiler::tx8be
