// opt-ddr (Passes.td): where the program's own DDR data sits in its scratch (DdrBinding::scratch),
// per the back end's DDR placement contract: each group result that is not a function result at
// `ddr_offsets` on its group, the dense constants (which have no key to be bound by) at
// `tx8be.const_ddr_offsets` on the module, the total in `tx8be.scratch_bytes`. Constants live
// for the whole program, at the bottom; group results above them, each from its group to the
// last op that reads it, sharing bytes with results dead by then (best fit, IntervalPlacement.h).
// Everything is a multiple of the DDR burst, so no transfer starts or ends inside a burst.
#include <algorithm>

#include <llvm/ADT/DenseMap.h>
#include <mlir/Dialect/Func/IR/FuncOps.h>
#include <mlir/IR/Builders.h>
#include <mlir/Pass/Pass.h>

#include "ChipOption.h"
#include "IntervalPlacement.h"
#include "WindowBytes.h"
#include "tilegraph/compiler/Dialect/Tx8be/Transforms/Passes.h"
#include "tilegraph/sim/chip_config.h"

namespace tg::compiler::tx8be {

#define GEN_PASS_CLASSES
#include "tilegraph/compiler/Dialect/Tx8be/Transforms/Passes.h.inc"

namespace {

constexpr int64_t kBoundElsewhere = -1;

uint64_t alignUp(uint64_t bytes, uint64_t align) { return (bytes + align - 1) / align * align; }

uint64_t tensorBytes(mlir::Type type) {
  auto tensor = type.dyn_cast<mlir::RankedTensorType>();
  return tensor ? window_bytes(tensor, tensor.getShape()) : 0;
}

struct OptDdrPass : public OptDdrBase<OptDdrPass> {
  void runOnOperation() override {
    mlir::ModuleOp module = getOperation();
    mlir::Builder builder(&getContext());
    mlir::FailureOr<sim::ChipConfig> chip = chipOption(module, "opt-ddr", chipConfig);
    if (mlir::failed(chip)) return signalPassFailure();
    const uint64_t burst = chip->ddr.burst_bytes;

    // The program's constants, by const_map_id: a dense one is placed here, an external one is
    // bound by its key.
    std::vector<int64_t> constOffsets;
    uint64_t top = 0;
    llvm::DenseMap<int64_t, bool> placedConstant;
    std::vector<LoadConstOp> loads;
    module.walk([&](LoadConstOp load) { loads.push_back(load); });
    std::sort(loads.begin(), loads.end(),
              [](LoadConstOp a, LoadConstOp b) { return a.getConstMapId() < b.getConstMapId(); });
    for (LoadConstOp load : loads) {
      const int64_t id = int64_t(load.getConstMapId());
      if (id < 0) {
        load.emitOpError() << "has a negative const_map_id " << id;
        return signalPassFailure();
      }
      if (!placedConstant.try_emplace(id, true).second) continue;
      if (int64_t(constOffsets.size()) <= id) constOffsets.resize(size_t(id) + 1, kBoundElsewhere);
      auto dense = load.getValue().dyn_cast<mlir::ElementsAttr>();
      if (!dense) continue;  // #tx8be.external: bound by key
      constOffsets[size_t(id)] = int64_t(top);
      top += alignUp(tensorBytes(dense.getType()), burst);
    }

    // Group results in program order: alive from their group to their last reader.
    llvm::DenseMap<mlir::Operation*, int64_t> position;
    int64_t next = 0;
    module.walk<mlir::WalkOrder::PreOrder>([&](mlir::Operation* op) { position[op] = next++; });
    const int64_t end = next;
    std::vector<GroupOp> groups;
    std::vector<std::pair<GroupOp, unsigned>> placed;  // (group, result number)
    std::vector<PlacedBuffer> buffers;
    module.walk([&](GroupOp group) {
      groups.push_back(group);
      for (mlir::OpResult result : group->getResults()) {
        bool returned = false;
        int64_t last = position.lookup(group);
        for (mlir::Operation* user : result.getUsers()) {
          returned = returned || mlir::isa<mlir::func::ReturnOp>(user);
          // A value leaving a subgraph may be read anywhere after it.
          last = std::max(last, mlir::isa<YieldOp>(user) ? end : position.lookup(user));
        }
        if (returned) continue;
        placed.push_back({group, result.getResultNumber()});
        buffers.push_back({alignUp(std::max<uint64_t>(tensorBytes(result.getType()), 1), burst),
                           {LiveInterval{position.lookup(group), last}}});
      }
    });
    const Placement placement = placeBestFit(buffers);

    for (GroupOp group : groups) {
      std::vector<int64_t> offsets(group->getNumResults(), kBoundElsewhere);
      for (size_t i = 0; i < placed.size(); ++i) {
        if (placed[i].first == group) offsets[placed[i].second] = int64_t(top + placement.offsets[i]);
      }
      group->setAttr("ddr_offsets", mlir::DenseI64ArrayAttr::get(&getContext(), offsets));
    }
    module->setAttr("tx8be.const_ddr_offsets", mlir::DenseI64ArrayAttr::get(&getContext(), constOffsets));
    module->setAttr("tx8be.scratch_bytes", builder.getI64IntegerAttr(int64_t(top + placement.peak)));
  }
};

}  // namespace

std::unique_ptr<mlir::Pass> createOptDdrPass() { return std::make_unique<OptDdrPass>(); }

}  // namespace tg::compiler::tx8be
