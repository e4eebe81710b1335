// opt-barrier (Passes.td): the fewest barriers the groups' dependencies need, as the TX8
// toolchain's opt_barrier (groupDAG) decides them. A barrier after a group synchronizes every
// tile: all that any tile issued before it is done before any tile goes on. A consumer must see
// its producer's results, which are in DDR (every group stores what it yields) and written by
// tiles other than the one reading them in general (on the same tiles too: the shardings of the
// two groups differ), so some barrier must sit after the producer and before the consumer. Each dependency is thus a
// range of groups in program order, [producer, consumer), that must hold a barrier; the fewest barriers hitting every
// range are found greedily, by the ranges' ends (each new barrier as late as the earliest-ending uncovered range
// allows), which is optimal for ranges on a line. On a program in layer order (a group after all of its producers'
// layer) this is one barrier after each layer whose results a later group reads; groups without a dependency between
// them, on the same or on disjoint tiles, run without one.
#include <algorithm>

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/DenseSet.h>
#include <llvm/ADT/SetVector.h>
#include <mlir/Dialect/Func/IR/FuncOps.h>
#include <mlir/Pass/Pass.h>

#include "GraphBlocks.h"
#include "tilegraph/compiler/Dialect/Tx8be/Transforms/Passes.h"

namespace tg::compiler::tx8be {

#define GEN_PASS_CLASSES
#include "tilegraph/compiler/Dialect/Tx8be/Transforms/Passes.h.inc"

namespace {

// The groups whose results `op` reads, looking through ops between groups (a value computed
// outside every group from a group's result still waits for that group).
void producerGroups(mlir::Operation* op, llvm::SetVector<GroupOp>& producers, llvm::DenseSet<mlir::Operation*>& seen) {
  for (mlir::Value operand : op->getOperands()) {
    mlir::Operation* producer = operand.getDefiningOp();
    if (!producer || !seen.insert(producer).second) continue;
    if (auto group = mlir::dyn_cast<GroupOp>(producer)) {
      producers.insert(group);
    } else {
      producerGroups(producer, producers, seen);
    }
  }
}

void placeBarriers(mlir::Block& block) {
  std::vector<GroupOp> groups;
  llvm::DenseMap<mlir::Operation*, int64_t> position;
  for (mlir::Operation& op : block) {
    if (auto group = mlir::dyn_cast<GroupOp>(op)) {
      position[group] = int64_t(groups.size());
      groups.push_back(group);
    }
  }
  if (groups.empty()) return;
  // The ranges [producer, consumer - 1] that must hold a barrier.
  std::vector<std::pair<int64_t, int64_t>> ranges;
  for (GroupOp consumer : groups) {
    llvm::SetVector<GroupOp> producers;
    llvm::DenseSet<mlir::Operation*> seen;
    producerGroups(consumer, producers, seen);
    for (GroupOp producer : producers) {
      auto at = position.find(producer);
      if (at == position.end()) continue;
      ranges.push_back({at->second, position.lookup(consumer) - 1});
    }
  }
  std::sort(ranges.begin(), ranges.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  std::vector<bool> barrier(groups.size(), false);
  int64_t last = -1;
  for (const auto& [first, end] : ranges) {
    if (last >= first) continue;  // a barrier inside the range already
    last = end;
    barrier[size_t(end)] = true;
  }
  mlir::Builder builder(block.getParentOp()->getContext());
  for (size_t i = 0; i < groups.size(); ++i) groups[i].setNeedBarrierAttr(builder.getBoolAttr(barrier[i]));
}

struct OptBarrierPass : public OptBarrierBase<OptBarrierPass> {
  void runOnOperation() override {
    for (mlir::Block* block : graph_blocks(getOperation())) placeBarriers(*block);
  }
};

}  // namespace

std::unique_ptr<mlir::Pass> createOptBarrierPass() { return std::make_unique<OptBarrierPass>(); }

}  // namespace tg::compiler::tx8be
