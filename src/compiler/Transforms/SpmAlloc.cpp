// allocateSpm (GroupPlan.h) and the spm-alloc pass: places a group's SPM buffers, as the TX8
// toolchain's SPMAllocPass does after SA_BufferLife and SA_BufferMerge (BufferLife.h). Each
// buffer (all its copies) keeps one offset for its whole life; buffers whose lifetimes meet get
// disjoint bytes (best fit over several orders, IntervalPlacement.h).
#include "BufferLife.h"
#include "ChipOption.h"
#include "SwPipeline.h"
#include "tilegraph/compiler/Dialect/Tx8be/Transforms/GroupPlan.h"
#include "tilegraph/compiler/Dialect/Tx8be/Transforms/Passes.h"

namespace tg::compiler::tx8be {

#define GEN_PASS_CLASSES
#include "tilegraph/compiler/Dialect/Tx8be/Transforms/Passes.h.inc"

PlanStatus allocateSpm(GroupOp group, const DataSplit& split, const Pipeline& pipeline, const sim::ChipConfig& chip,
                       SpmPlan& spm) {
  const std::vector<BufferLife> buffers = bufferLives(group, split, pipeline);
  std::vector<PlacedBuffer> placing;
  for (const BufferLife& buffer : buffers) placing.push_back({buffer.footprint(), buffer.intervals});
  const Placement placement = placeBestFit(placing);

  spm = SpmPlan{};
  for (size_t i = 0; i < buffers.size(); ++i) {
    const BufferLife& buffer = buffers[i];
    const SpmBuffer placed{.scratchOf = buffer.scratchOf,
                           .bytes = buffer.bytes,
                           .copies = buffer.copies,
                           .firstCycle = buffer.intervals.front().first,
                           .lastCycle = buffer.intervals.back().last,
                           .offset = placement.offsets[i]};
    if (buffer.scratchOf) spm.buffers.push_back(placed);
    // Every value of an in-place chain is listed, at the chain's offset: each op's dev_info
    // names the buffer it writes.
    for (mlir::Value member : buffer.members) {
      spm.buffers.push_back(placed);
      spm.buffers.back().value = member;
    }
  }
  spm.peak = placement.peak;
  spm.lowerBound = liveBytesBound(placing);
  return spm.peak > chip.spm_bytes ? PlanStatus::SpmAllocFailed : PlanStatus::Ok;
}

namespace {

struct SpmAllocPass : public SpmAllocBase<SpmAllocPass> {
  void runOnOperation() override {
    auto module = getOperation()->getParentOfType<mlir::ModuleOp>();
    mlir::FailureOr<sim::ChipConfig> configured = chipOption(module, "spm-alloc", chipConfig);
    if (mlir::failed(configured)) return signalPassFailure();
    sim::ChipConfig chip = *configured;
    if (spmBytes != 0) chip.spm_bytes = spmBytes;
    const mlir::WalkResult walked = getOperation().walk([&](GroupOp group) {
      if (worksInDdr(group)) return mlir::WalkResult::advance();
      mlir::FailureOr<GroupPlan> plan = readPlan(group);
      if (mlir::failed(plan)) return mlir::WalkResult::interrupt();
      if (plan->pipeline.cycles.empty()) {
        group.emitOpError() << "has no pipeline to allocate SPM over (run sw-pipeline first)";
        return mlir::WalkResult::interrupt();
      }
      if (allocateSpm(group, plan->split, plan->pipeline, chip, plan->spm) != PlanStatus::Ok) {
        group.emitOpError() << "needs " << plan->spm.peak << " bytes of SPM (at least " << plan->spm.lowerBound
                            << " live at once) but a tile has " << chip.spm_bytes;
        return mlir::WalkResult::interrupt();
      }
      writePlan(group, *plan);
      return mlir::WalkResult::advance();
    });
    if (walked.wasInterrupted()) signalPassFailure();
  }
};

}  // namespace

std::unique_ptr<mlir::Pass> createSpmAllocPass() { return std::make_unique<SpmAllocPass>(); }

}  // namespace tg::compiler::tx8be
