// estimateCycles (GroupPlan.h) and the `estimate` pass: the cycles a group's plan takes on the
// chip, as the TX8 toolchain's EstimatePass prices a candidate. The formula:
//
//   cycles = sum over pipeline cycles c of  max over engines e of  sum of cost(item) for the
//            items of c on e
//
// on tile 0, whose range is the largest (tiles run side by side; the group ends with the slowest).
// The pipeline's start-up and drain are in the sum: its first cycles hold the first loads (and
// the step-invariant ones) with nothing to overlap, its last the last stores. An item's cost:
//   - a load or a store (RDMA / WDMA): latency + ceil(ddr_bytes / bandwidth), where ddr_bytes is
//     its window at that step cut into contiguous runs, each rounded up to whole DDR bursts, and
//     bandwidth = min(the DMA engine's bytes per cycle, the DDR's bytes per cycle / the tiles the
//     group uses): all of the group's tiles load and store at about the same time and share DDR;
//   - a computing or moving op (NE, CT, TDMA): the cycles of its window at that step on one tile
//     from the C-model's op library (queryOpCost, OpCost.h: the op run on the slice), or, for a
//     window the query does not take, the whole op's getOpClockCycle scaled by the window's
//     share of the result's elements.
// A step whose window is empty on tile 0 costs nothing. What the formula leaves out, and the
// C-model has: NoC traffic, the DDR's sharing with other groups, and waits between engines
// inside a pipeline cycle (an op's inputs are ready when its cycle starts).
#include <algorithm>
#include <cmath>

#include <llvm/ADT/DenseMap.h>
#include <mlir/Pass/Pass.h>

#include "ChipOption.h"
#include "GroupTags.h"
#include "WindowBytes.h"
#include "tilegraph/compiler/Dialect/Tx8be/IR/OpCost.h"
#include "tilegraph/compiler/Dialect/Tx8be/Transforms/GroupPlan.h"
#include "tilegraph/compiler/Dialect/Tx8be/Transforms/Passes.h"
#include "tilegraph/compiler/Dialect/Tx8be/Transforms/SliceWindows.h"
#include "tilegraph/core/error.h"
#include "tilegraph/sim/chip_config.h"

namespace tg::compiler::tx8be {

#define GEN_PASS_CLASSES
#include "tilegraph/compiler/Dialect/Tx8be/Transforms/Passes.h.inc"

namespace {

uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

uint64_t elements(llvm::ArrayRef<int64_t> shape) {
  uint64_t n = 1;
  for (int64_t d : shape) n *= uint64_t(std::max<int64_t>(d, 0));
  return n;
}

// The DDR bytes a transfer of `window` of a row-major tensor of `type` moves: its contiguous runs
// (the innermost dimensions it spans whole, and its extent in the next) each rounded up to
// bursts.
uint64_t ddr_bytes(mlir::RankedTensorType type, llvm::ArrayRef<int64_t> window, uint64_t burst) {
  llvm::ArrayRef<int64_t> shape = type.getShape();
  std::vector<int64_t> run(window.size(), 1);
  for (size_t d = window.size(); d-- > 0;) {
    run[d] = window[d];
    if (window[d] != shape[d]) break;
  }
  const uint64_t runs = elements(window) / std::max<uint64_t>(1, elements(run));
  return runs * ceil_div(window_bytes(type, run), burst) * burst;
}

struct ItemCost {
  const sim::ChipConfig& chip;
  double dmaShare;  // each tile's share of the DDR bandwidth, bytes per cycle

  uint64_t transfer(const sim::DmaConfig& dma, mlir::Value value, llvm::ArrayRef<int64_t> window) const {
    auto type = value.getType().cast<mlir::RankedTensorType>();
    const double bandwidth = std::min(dma.bytes_per_cycle, dmaShare);
    return uint64_t(dma.latency_cycles) +
           uint64_t(std::ceil(double(ddr_bytes(type, window, chip.ddr.burst_bytes)) / bandwidth));
  }

  uint64_t compute(mlir::Operation* op, llvm::ArrayRef<int64_t> window) const {
    try {
      return queryOpCost(op, window, chip).cycles;
    } catch (const Error&) {
      // A window the cost query does not take: the whole op's cycles scaled to the window.
      auto lib = mlir::dyn_cast<OpLibInterface>(op);
      if (!lib || op->getNumResults() != 1) return 0;
      const uint64_t total = elements(op->getResult(0).getType().cast<mlir::ShapedType>().getShape());
      return total ? ceil_div(lib.getOpClockCycle() * elements(window), total) : 0;
    }
  }
};

}  // namespace

uint64_t estimateCycles(GroupOp group, const GroupPlan& plan, const sim::ChipConfig& chip) {
  const DataSplit& split = plan.split;
  const llvm::ArrayRef<int64_t> shape = primaryValue(group).getType().cast<mlir::ShapedType>().getShape();
  int64_t tiles = 1;
  for (int32_t parts : split.sharding) tiles *= parts;
  const ItemCost cost{chip, chip.ddr.bytes_per_cycle / double(tiles)};

  // Tile 0's windows of every value, per step (computed once per step the pipeline names).
  llvm::DenseMap<int64_t, llvm::DenseMap<mlir::Value, WindowParam>> windows_of_step;
  auto window_of = [&](mlir::Value value, int64_t step) -> std::vector<int64_t> {
    auto [it, fresh] = windows_of_step.try_emplace(step);
    if (fresh) {
      const WindowParam primary = primaryWindow(shape, split.sharding, split.slice, 0, step);
      if (!isEmpty(primary)) {
        mlir::FailureOr<llvm::DenseMap<mlir::Value, WindowParam>> windows = bodyWindows(group, primary);
        if (mlir::succeeded(windows)) it->second = std::move(*windows);
      }
    }
    auto found = it->second.find(value);
    if (found == it->second.end()) return {};
    return found->second.size;
  };

  uint64_t total = 0;
  for (const std::vector<PipelineItem>& cycle : plan.pipeline.cycles) {
    uint64_t per_engine[5] = {};
    for (const PipelineItem& item : cycle) {
      if (item.op->getNumResults() != 1) continue;
      mlir::Value result = item.op->getResult(0);
      const std::vector<int64_t> window = window_of(result, item.step);
      if (window.empty() || elements(window) == 0) continue;
      uint64_t cycles = 0;
      switch (item.engine) {
        case PipelineEngine::Load: cycles = cost.transfer(chip.rdma, result, window); break;
        case PipelineEngine::Store: cycles = cost.transfer(chip.wdma, result, window); break;
        default: cycles = cost.compute(item.op, window); break;
      }
      per_engine[size_t(item.engine)] += cycles;
    }
    total += *std::max_element(std::begin(per_engine), std::end(per_engine));
  }
  return total;
}

namespace {

struct EstimatePass : public EstimateBase<EstimatePass> {
  void runOnOperation() override {
    mlir::FailureOr<sim::ChipConfig> chip = chipOption(getOperation(), "estimate", chipConfig);
    if (mlir::failed(chip)) return signalPassFailure();
    getOperation().walk([&](GroupOp group) {
      if (group.getGroupTag().value_or(0) == kGroupTagInDdr) return;
      mlir::FailureOr<GroupPlan> plan = readPlan(group);
      if (mlir::failed(plan)) return signalPassFailure();
      if (plan->pipeline.cycles.empty()) {
        group.emitOpError() << "has no pipeline to estimate (run sw-pipeline first)";
        return signalPassFailure();
      }
      const uint64_t cycles = estimateCycles(group, *plan, *chip);
      group.setEstimatedCyclesAttr(mlir::IntegerAttr::get(mlir::IntegerType::get(&getContext(), 64), int64_t(cycles)));
    });
  }
};

}  // namespace

std::unique_ptr<mlir::Pass> createEstimatePass() { return std::make_unique<EstimatePass>(); }

}  // namespace tg::compiler::tx8be
