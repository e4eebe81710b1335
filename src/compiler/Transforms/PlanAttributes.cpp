// A group's plan as attributes (GroupPlan.h): writePlan puts a GroupPlan on the group and the ops
// of its body, readPlan reads it back. This is the form codegen reads, so everything it needs
// is here; what only the search itself uses is not stored:
//   - a buffer's lifetime (firstCycle / lastCycle) is the allocator's working data: readPlan
//     leaves it 0;
//   - a buffer's bytes are not stored: readPlan takes the distance between its copies when it
//     has several, else the bytes of its value's slice (WindowBytes.h) rounded up to the SPM
//     alignment, as the allocation sizes buffers;
//   - a pipeline item's engine is not stored: it is the op's (pipelineEngine, SwPipeline.h).
// A part of the plan not computed yet (no pipeline cycles, no SPM buffers, an estimate of 0) is
// not written, and an attribute it would replace is removed, so a plan's attributes always
// describe one plan. A value whose window is the same every step carries the unit attribute
// `tx8be.step_invariant`.
#include <algorithm>
#include <string>

#include <llvm/ADT/DenseMap.h>
#include <mlir/IR/Builders.h>

#include "BufferLife.h"
#include "PanelMatmul.h"
#include "SwPipeline.h"
#include "WindowBytes.h"
#include "tilegraph/compiler/Dialect/Tx8be/Transforms/GroupPlan.h"

namespace tg::compiler::tx8be {

namespace {

constexpr llvm::StringLiteral kStepInvariant = "tx8be.step_invariant";
// A K split (GroupPlan.h): its panel, and whether its operand panels are shared over the NoC.
constexpr llvm::StringLiteral kKPanel = "tx8be.k_panel";
constexpr llvm::StringLiteral kNocShare = "tx8be.noc_share";

// dev_info.source_type: the pipeline stage of an op.
constexpr int32_t kSourceLoad = 0;
constexpr int32_t kSourceCompute = 1;
constexpr int32_t kSourceStore = 2;

int32_t source_type_of(PipelineEngine engine) {
  if (engine == PipelineEngine::Load) return kSourceLoad;
  if (engine == PipelineEngine::Store) return kSourceStore;
  return kSourceCompute;
}

// The body's ops that define a value (every op but the terminator), in order.
std::vector<mlir::Operation*> body_ops(GroupOp group) {
  std::vector<mlir::Operation*> ops;
  for (mlir::Operation& op : group.getBodyBlock().without_terminator()) ops.push_back(&op);
  return ops;
}

mlir::IntegerAttr i64(mlir::MLIRContext* context, int64_t value) {
  return mlir::IntegerAttr::get(mlir::IntegerType::get(context, 64), value);
}

DevAttr dev_info_of(mlir::Operation* op) {
  if (auto dev = op->getAttrOfType<DevAttr>("dev_info")) return dev;
  return DevAttr::getWithLayout(op->getContext(), LayoutMode::Tensor);
}

}  // namespace

void writePlan(GroupOp group, const GroupPlan& plan) {
  mlir::MLIRContext* context = group->getContext();
  const DataSplit& split = plan.split;
  auto set_or_remove = [&](llvm::StringRef name, mlir::Attribute value) {
    if (value) {
      group->setAttr(name, value);
    } else {
      group->removeAttr(name);
    }
  };
  set_or_remove("sharding", split.sharding.empty() ? nullptr : mlir::DenseI32ArrayAttr::get(context, split.sharding));
  set_or_remove("slice", split.slice.empty() ? nullptr : mlir::DenseI64ArrayAttr::get(context, split.slice));
  group.setStepsAttr(i64(context, split.steps));
  set_or_remove(kKPanel, split.kPanel > 0 ? i64(context, split.kPanel) : nullptr);
  set_or_remove(kNocShare, split.kPanel > 0 && split.shareOperands ? mlir::UnitAttr::get(context) : nullptr);

  const std::vector<mlir::Operation*> ops = body_ops(group);
  llvm::DenseMap<mlir::Operation*, int64_t> index_of;
  for (size_t i = 0; i < ops.size(); ++i) index_of[ops[i]] = int64_t(i);

  llvm::SmallVector<mlir::Attribute> cycles;
  llvm::DenseMap<mlir::Operation*, int32_t> staged;
  for (const std::vector<PipelineItem>& cycle : plan.pipeline.cycles) {
    llvm::SmallVector<int64_t> pairs;
    for (const PipelineItem& item : cycle) {
      pairs.push_back(index_of.lookup(item.op));
      pairs.push_back(item.step);
      staged[item.op] = source_type_of(item.engine);
    }
    cycles.push_back(mlir::DenseI64ArrayAttr::get(context, pairs));
  }
  set_or_remove("pipeline", cycles.empty() ? nullptr : mlir::ArrayAttr::get(context, cycles));

  const bool allocated = !plan.spm.buffers.empty();
  set_or_remove("spm_alloc_size", allocated ? i64(context, int64_t(plan.spm.peak)) : nullptr);
  set_or_remove("spm_lower_bound", allocated ? i64(context, int64_t(plan.spm.lowerBound)) : nullptr);
  set_or_remove("estimated_cycles", plan.estimatedCycles ? i64(context, int64_t(plan.estimatedCycles)) : nullptr);

  for (mlir::Operation* op : ops) {
    if (op->getNumResults() != 1) continue;
    mlir::Value result = op->getResult(0);
    auto slicing = std::find_if(split.values.begin(), split.values.end(),
                                [&](const ValueSlicing& v) { return v.value == result; });
    auto buffer = std::find_if(plan.spm.buffers.begin(), plan.spm.buffers.end(),
                               [&](const SpmBuffer& b) { return b.value == result; });
    auto scratch = std::find_if(plan.spm.buffers.begin(), plan.spm.buffers.end(),
                                [&](const SpmBuffer& b) { return !b.value && b.scratchOf == op; });
    DevAttr dev = dev_info_of(op);

    auto empty = mlir::DenseI64ArrayAttr::get(context, {});
    mlir::DenseI64ArrayAttr slice = empty;
    if (slicing != split.values.end()) {
      slice = mlir::DenseI64ArrayAttr::get(context, slicing->slice);
      auto parallel = op->getAttrOfType<ParallelAttr>("tile_parallel");
      auto parts = mlir::DenseI32ArrayAttr::get(context, slicing->sharding);
      op->setAttr(
          "tile_parallel",
          parallel ? ParallelAttr::get(context, parallel.getParallel(), parallel.getIsDpInner(), parallel.getDpDimX(),
                                       parallel.getDpDimY(), parallel.getDpDimZ(), parallel.getTpDimX(),
                                       parallel.getTpDimY(), parallel.getTpDimZ(), parallel.getShardingIsGiven(), parts)
                   : ParallelAttr::get(context, ParallelMode::None, false, 1, 1, 1, 1, 1, 1, false, parts));
      if (slicing->stepInvariant) {
        op->setAttr(kStepInvariant, mlir::UnitAttr::get(context));
      } else {
        op->removeAttr(kStepInvariant);
      }
    }

    int32_t copies = 1;
    mlir::DenseI64ArrayAttr addresses = empty;
    if (buffer != plan.spm.buffers.end()) {
      copies = buffer->copies;
      llvm::SmallVector<int64_t> offsets;
      for (int32_t i = 0; i < copies; ++i) offsets.push_back(int64_t(buffer->offset + uint64_t(i) * buffer->bytes));
      addresses = mlir::DenseI64ArrayAttr::get(context, offsets);
    }
    uint64_t imm_size = dev.getImmSize();
    int64_t imm_addr = -1;
    if (scratch != plan.spm.buffers.end()) {
      imm_size = scratch->bytes;
      imm_addr = int64_t(scratch->offset);
    }
    auto stage = staged.find(op);
    const int32_t source_type = stage != staged.end() ? stage->second : source_type_of(pipelineEngine(op));
    op->setAttr("dev_info", DevAttr::get(context, imm_size, dev.getMemLayout(), copies > 1, copies,
                                         dev.getOutShapeBufIdx(), slice, source_type, imm_addr, addresses));
  }
}

mlir::FailureOr<GroupPlan> readPlan(GroupOp group) {
  GroupPlan plan;
  auto sharding = group.getShardingAttr();
  auto slice = group.getSliceAttr();
  auto steps = group.getStepsAttr();
  if (!sharding || !slice || !steps) {
    return group.emitOpError() << "has no plan: it needs sharding, slice and steps (run group-cost or data-split)";
  }
  plan.split.sharding.assign(sharding.asArrayRef().begin(), sharding.asArrayRef().end());
  plan.split.slice.assign(slice.asArrayRef().begin(), slice.asArrayRef().end());
  plan.split.steps = steps.getInt();
  if (auto panel = group->getAttrOfType<mlir::IntegerAttr>(kKPanel)) {
    if (panel.getInt() < 1) return group.emitOpError() << kKPanel << " must be at least 1, got " << panel.getInt();
    std::string why;
    if (!panelMatmul(group, &why)) {
      return group.emitOpError() << "has " << kKPanel << " but its K cannot be split: " << why;
    }
    plan.split.kPanel = panel.getInt();
    plan.split.shareOperands = group->hasAttr(kNocShare);
  }

  const std::vector<mlir::Operation*> ops = body_ops(group);
  for (mlir::Operation* op : ops) {
    if (op->getNumResults() != 1) continue;
    auto parallel = op->getAttrOfType<ParallelAttr>("tile_parallel");
    auto dev = op->getAttrOfType<DevAttr>("dev_info");
    if (!parallel || !parallel.getShapeSpatialSharding() || !dev || !dev.getTemporalMemSlice() ||
        dev.getTemporalMemSlice().empty()) {
      return op->emitOpError() << "has no slicing in its group's plan (tile_parallel.shape_spatial_sharding and "
                                  "dev_info.temporal_mem_slice)";
    }
    ValueSlicing value;
    value.value = op->getResult(0);
    value.sharding.assign(parallel.getShapeSpatialSharding().asArrayRef().begin(),
                          parallel.getShapeSpatialSharding().asArrayRef().end());
    value.slice.assign(dev.getTemporalMemSlice().asArrayRef().begin(), dev.getTemporalMemSlice().asArrayRef().end());
    value.stepInvariant = op->hasAttr(kStepInvariant);
    plan.split.values.push_back(std::move(value));

    auto type = op->getResult(0).getType().dyn_cast<mlir::RankedTensorType>();
    llvm::ArrayRef<int64_t> addresses = dev.getMemAddr() ? dev.getMemAddr().asArrayRef() : llvm::ArrayRef<int64_t>{};
    if (!addresses.empty()) {
      SpmBuffer buffer;
      buffer.value = op->getResult(0);
      buffer.copies = int32_t(addresses.size());
      buffer.offset = uint64_t(addresses[0]);
      const uint64_t slice_bytes = window_bytes(type, plan.split.values.back().slice);
      buffer.bytes = addresses.size() > 1 ? uint64_t(addresses[1] - addresses[0])
                                          : (slice_bytes + kSpmAlign - 1) / kSpmAlign * kSpmAlign;
      plan.spm.buffers.push_back(buffer);
    }
    if (dev.getImmAddr() >= 0) {
      SpmBuffer buffer;
      buffer.scratchOf = op;
      buffer.bytes = dev.getImmSize();
      buffer.offset = uint64_t(dev.getImmAddr());
      plan.spm.buffers.push_back(buffer);
    }
  }

  if (auto pipeline = group.getPipelineAttr()) {
    for (auto cycleAttr : pipeline.getAsRange<mlir::DenseI64ArrayAttr>()) {
      std::vector<PipelineItem> cycle;
      llvm::ArrayRef<int64_t> pairs = cycleAttr.asArrayRef();
      for (size_t i = 0; i + 1 < pairs.size(); i += 2) {
        if (pairs[i] >= int64_t(ops.size())) {
          return group.emitOpError() << "pipeline item names op " << pairs[i] << ", the terminator";
        }
        mlir::Operation* op = ops[size_t(pairs[i])];
        cycle.push_back({op, pairs[i + 1], pipelineEngine(op)});
      }
      plan.pipeline.cycles.push_back(std::move(cycle));
    }
  }
  if (auto size = group.getSpmAllocSizeAttr()) plan.spm.peak = uint64_t(size.getInt());
  if (auto bound = group.getSpmLowerBoundAttr()) plan.spm.lowerBound = uint64_t(bound.getInt());
  if (auto cycles = group.getEstimatedCyclesAttr()) plan.estimatedCycles = uint64_t(cycles.getInt());
  return plan;
}

}  // namespace tg::compiler::tx8be
