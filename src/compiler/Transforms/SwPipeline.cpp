// buildPipeline (GroupPlan.h) and the sw-pipeline pass: the software pipeline of a group, as the
// TX8 toolchain's TS_SwPipeline builds it. One step of the group is a list of frames (the ops one
// engine set runs before the next set can start); the steps repeat that list, and each repeat is
// retracted into the previous one as far as their frames' engines are disjoint, so that the load
// of step s + 1 and the store of step s - 1 run beside the compute of step s. Step-invariant ops
// (the weights' loads) run once, in a prologue retracted into the first steps.
#include <algorithm>

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/DenseSet.h>

#include "GroupTags.h"
#include "PanelMatmul.h"
#include "SwPipeline.h"
#include "tilegraph/compiler/Dialect/Tx8be/Transforms/GroupPlan.h"
#include "tilegraph/compiler/Dialect/Tx8be/Transforms/Passes.h"

namespace tg::compiler::tx8be {

#define GEN_PASS_CLASSES
#include "tilegraph/compiler/Dialect/Tx8be/Transforms/Passes.h.inc"

bool worksInDdr(GroupOp group) {
  auto tag = group.getGroupTagAttr();
  return tag && tag.getInt() == kGroupTagInDdr;
}

PipelineEngine pipelineEngine(mlir::Operation* op) {
  if (mlir::isa<LoadVarOp, LoadConstOp>(op)) return PipelineEngine::Load;
  if (mlir::isa<StoreVarOp>(op)) return PipelineEngine::Store;
  if (auto lib = mlir::dyn_cast<OpLibInterface>(op)) {
    switch (lib.queryOpAttr().engine) {
      case Engine::NE: return PipelineEngine::NE;
      case Engine::DMA: return PipelineEngine::TDMA;
      case Engine::CT: return PipelineEngine::CT;
    }
  }
  return PipelineEngine::CT;
}

bool isPipelined(mlir::Operation* op) {
  if (mlir::isa<YieldOp>(op)) return false;
  // The consumer reads such a constant where it is: no load runs.
  if (auto load = mlir::dyn_cast<LoadConstOp>(op)) return !load.getBypassCodegen().value_or(false);
  return true;
}

namespace {

using EngineSet = unsigned;
EngineSet engineBit(PipelineEngine engine) { return 1u << unsigned(engine); }

// Frames of one step (the Repeat node's body): an op runs in the frame after its latest producer
// on another engine, or in its producer's frame when the engine is the same (the engine runs the
// two in order).
struct StepFrames {
  std::vector<std::vector<mlir::Operation*>> frames;
  llvm::DenseMap<mlir::Operation*, int64_t> frameOf;
  std::vector<EngineSet> engines;
};

StepFrames frameOps(llvm::ArrayRef<mlir::Operation*> ops) {
  StepFrames step;
  llvm::DenseSet<mlir::Operation*> members(ops.begin(), ops.end());
  for (mlir::Operation* op : ops) {
    int64_t frame = 0;
    const PipelineEngine engine = pipelineEngine(op);
    for (mlir::Value operand : op->getOperands()) {
      mlir::Operation* producer = operand.getDefiningOp();
      if (!producer || !members.contains(producer)) continue;
      const bool sameEngine =
          pipelineEngine(producer) == engine && engine != PipelineEngine::Load && engine != PipelineEngine::Store;
      frame = std::max(frame, step.frameOf.lookup(producer) + (sameEngine ? 0 : 1));
    }
    step.frameOf[op] = frame;
    if (int64_t(step.frames.size()) <= frame) {
      step.frames.resize(frame + 1);
      step.engines.resize(frame + 1, 0);
    }
    step.frames[frame].push_back(op);
    step.engines[frame] |= engineBit(engine);
  }
  return step;
}

// The initiation interval after retraction (TS_SwPipeline's getRetract): the fewest frames between
// the starts of two steps such that frames of different steps that meet in one cycle use
// disjoint engines.
int64_t initiationInterval(const StepFrames& step) {
  const int64_t frames = int64_t(step.frames.size());
  for (int64_t interval = 1; interval < frames; ++interval) {
    bool parallel = true;
    for (int64_t a = 0; a < frames && parallel; ++a) {
      for (int64_t b = a + interval; b < frames && parallel; b += interval) {
        parallel = (step.engines[a] & step.engines[b]) == 0;
      }
    }
    if (parallel) return interval;
  }
  return std::max<int64_t>(frames, 1);
}

// An op whose every result has the same window at every step, fed only by such ops.
llvm::DenseSet<mlir::Operation*> stepInvariantOps(llvm::ArrayRef<mlir::Operation*> ops, const DataSplit& split) {
  llvm::DenseSet<mlir::Value> invariantValues;
  for (const ValueSlicing& slicing : split.values) {
    if (slicing.stepInvariant) invariantValues.insert(slicing.value);
  }
  llvm::DenseSet<mlir::Operation*> invariant;
  for (mlir::Operation* op : ops) {
    bool all = op->getNumResults() > 0;
    for (mlir::Value result : op->getResults()) all = all && invariantValues.contains(result);
    for (mlir::Value operand : op->getOperands()) {
      mlir::Operation* producer = operand.getDefiningOp();
      if (producer && !invariant.contains(producer)) all = false;
    }
    if (all) invariant.insert(op);
  }
  return invariant;
}

}  // namespace

Pipeline buildPipeline(GroupOp group, const DataSplit& split) {
  if (split.kPanel > 0) {
    if (const std::optional<PanelMatmul> matmul = panelMatmul(group)) return panelPipeline(*matmul, split);
  }
  std::vector<mlir::Operation*> body;
  for (mlir::Operation& op : group.getBodyBlock()) {
    if (isPipelined(&op)) body.push_back(&op);
  }
  const llvm::DenseSet<mlir::Operation*> invariant = stepInvariantOps(body, split);
  std::vector<mlir::Operation*> prologueOps, stepOps;
  for (mlir::Operation* op : body) (invariant.contains(op) ? prologueOps : stepOps).push_back(op);

  const int64_t steps = std::max<int64_t>(split.steps, 1);
  const StepFrames prologue = frameOps(prologueOps);
  const StepFrames step = frameOps(stepOps);
  const int64_t interval = initiationInterval(step);

  // The prologue retracted into the first steps: step 0 starts as early as the invariant values
  // its ops read allow (same-engine consumers may share their producer's cycle).
  int64_t start = 0;
  for (mlir::Operation* op : stepOps) {
    for (mlir::Value operand : op->getOperands()) {
      mlir::Operation* producer = operand.getDefiningOp();
      if (!producer || !invariant.contains(producer)) continue;
      const int64_t ready =
          prologue.frameOf.lookup(producer) + (pipelineEngine(producer) == pipelineEngine(op) ? 0 : 1);
      start = std::max(start, ready - step.frameOf.lookup(op));
    }
  }

  const int64_t stepCycles = int64_t(step.frames.size());
  const int64_t loopEnd = stepOps.empty() ? 0 : start + (steps - 1) * interval + stepCycles;
  Pipeline pipeline;
  pipeline.cycles.resize(std::max<int64_t>(int64_t(prologue.frames.size()), loopEnd));
  for (size_t frame = 0; frame < prologue.frames.size(); ++frame) {
    for (mlir::Operation* op : prologue.frames[frame]) pipeline.cycles[frame].push_back({op, 0, pipelineEngine(op)});
  }
  if (!stepOps.empty()) {
    for (int64_t s = 0; s < steps; ++s) {
      for (int64_t frame = 0; frame < stepCycles; ++frame) {
        for (mlir::Operation* op : step.frames[frame]) {
          pipeline.cycles[start + s * interval + frame].push_back({op, s, pipelineEngine(op)});
        }
      }
    }
  }
  return pipeline;
}

namespace {

bool samePipeline(const Pipeline& a, const Pipeline& b) {
  if (a.cycles.size() != b.cycles.size()) return false;
  for (size_t cycle = 0; cycle < a.cycles.size(); ++cycle) {
    const auto& x = a.cycles[cycle];
    const auto& y = b.cycles[cycle];
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i) {
      if (x[i].op != y[i].op || x[i].step != y[i].step) return false;
    }
  }
  return true;
}

struct SwPipelinePass : public SwPipelineBase<SwPipelinePass> {
  void runOnOperation() override {
    const mlir::WalkResult walked = getOperation().walk([&](GroupOp group) {
      if (worksInDdr(group)) return mlir::WalkResult::advance();
      mlir::FailureOr<GroupPlan> plan = readPlan(group);
      if (mlir::failed(plan)) return mlir::WalkResult::interrupt();
      Pipeline pipeline = buildPipeline(group, plan->split);
      // A placement and an estimate belong to the pipeline they were made for (group-cost's
      // survive when the pipeline is the one it built).
      if (!samePipeline(pipeline, plan->pipeline)) {
        plan->pipeline = std::move(pipeline);
        plan->spm = SpmPlan{};
        plan->estimatedCycles = 0;
      }
      writePlan(group, *plan);
      return mlir::WalkResult::advance();
    });
    if (walked.wasInterrupted()) signalPassFailure();
  }
};

}  // namespace

std::unique_ptr<mlir::Pass> createSwPipelinePass() { return std::make_unique<SwPipelinePass>(); }

}  // namespace tg::compiler::tx8be
