// The data split of a group (GroupPlan.h's dataSplit, the TX8 toolchain's DataSplitNewPass) and
// the `data-split` pass that runs it on every group. Its stages:
//   DS_SpaceInit       the primary result (the first value the body yields) is the iteration
//                      space; the sharding must cut it into non-empty parts over at most the
//                      group's tiles;
//   DS_TileSharding    the sharding is propagated from the results to every value through
//                      ShardingInterface::tileShardingSplit, consumers before producers;
//                      NotSplittable when an op refuses (below);
//   DS_TileSplit       the per-step slice of the primary result: tile 0's whole range, halved
//                      along the outermost dimension that can still be halved (one a consumer
//                      allows to be walked in steps) until the group's buffers fit the SPM
//                      (spmBytesNeeded, DataSplit.h). The TX8 toolchain labels a split by the
//                      dimensions it walks (IC2OC / IC2IC: reduction dimensions, OC2NH: output
//                      channels to batch and rows); only output dimensions are walked here, outer
//                      first, so a reduction is never split across steps;
//   DS_SlicePropagate  every value's largest window over all tiles and steps (bodyWindows,
//                      SliceWindows.h, from ShardingInterface::backWindow) is its slice; a value
//                      whose window on a tile is the same at every step is step-invariant;
//   DS_UpdateSliceIR   writePlan, in the data-split pass.
// An op refuses a cut when its OpAttr says it runs on one tile (parallel = false) or when its
// ShardingInterface gives no entry per operand for it (a row op's cut row).
#include <algorithm>
#include <numeric>
#include <string>

#include <mlir/Pass/Pass.h>

#include "ChipOption.h"
#include "DataSplit.h"
#include "GroupTags.h"
#include "ShardingCandidates.h"
#include "WindowBytes.h"
#include "tilegraph/compiler/Dialect/Tx8be/IR/OpCost.h"
#include "tilegraph/compiler/Dialect/Tx8be/Transforms/Passes.h"
#include "tilegraph/compiler/Dialect/Tx8be/Transforms/SliceWindows.h"
#include "tilegraph/core/error.h"
#include "tilegraph/sim/chip_config.h"

namespace tg::compiler::tx8be {

#define GEN_PASS_CLASSES
#include "tilegraph/compiler/Dialect/Tx8be/Transforms/Passes.h.inc"

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

llvm::ArrayRef<int64_t> shape_of(mlir::Value value) { return value.getType().cast<mlir::ShapedType>().getShape(); }

std::vector<int32_t> ones(mlir::Value value) { return std::vector<int32_t>(shape_of(value).size(), 1); }

int64_t product(llvm::ArrayRef<int64_t> v) {
  return std::accumulate(v.begin(), v.end(), int64_t(1), std::multiplies<>());
}
int64_t product(llvm::ArrayRef<int32_t> v) {
  return std::accumulate(v.begin(), v.end(), int64_t(1), std::multiplies<>());
}

// A value's parts over tiles (spatial) and over steps (temporal), as the rules propagate them.
struct Cut {
  std::vector<int32_t> sharding;
  std::vector<int32_t> split;
};

// DS_TileSharding: the cut of every value for the primary result's `cut`; the op that refuses
// it, if one does.
struct Propagation {
  llvm::DenseMap<mlir::Value, Cut> cuts;
  mlir::Operation* refusedBy = nullptr;
};

// A value two consumers cut differently is held whole in the dimensions where they differ.
void merge(llvm::DenseMap<mlir::Value, Cut>& cuts, mlir::Value value, Cut cut) {
  auto [it, inserted] = cuts.try_emplace(value, cut);
  if (inserted) return;
  for (size_t d = 0; d < cut.sharding.size(); ++d) {
    if (it->second.sharding[d] != cut.sharding[d]) it->second.sharding[d] = 1;
    if (it->second.split[d] != cut.split[d]) it->second.split[d] = 1;
  }
}

Propagation propagate(GroupOp group, const Cut& primary) {
  Propagation out;
  const mlir::Value primary_value = primaryValue(group);
  for (mlir::Value result : group.getYield()->getOperands()) {
    merge(out.cuts, result, shape_of(result) == shape_of(primary_value) ? primary : Cut{ones(result), ones(result)});
  }
  for (mlir::Operation& op : llvm::reverse(group.getBodyBlock().without_terminator())) {
    if (op.getNumResults() != 1) continue;
    auto found = out.cuts.find(op.getResult(0));
    if (found == out.cuts.end()) continue;
    const Cut cut = found->second;
    const bool is_cut = product(cut.sharding) > 1 || product(cut.split) > 1;
    auto lib = mlir::dyn_cast<OpLibInterface>(&op);
    auto rules = mlir::dyn_cast<ShardingInterface>(&op);
    if (is_cut && (!rules || (lib && !lib.queryOpAttr().parallel))) {
      out.refusedBy = &op;
      return out;
    }
    if (!rules) continue;
    ShardingSplitParam param{cut.sharding, cut.split};
    const std::vector<ShardingSplitParam> operands = rules.tileShardingSplit(param);
    if (operands.size() != op.getNumOperands()) {
      out.refusedBy = &op;
      return out;
    }
    for (unsigned i = 0; i < op.getNumOperands(); ++i) {
      mlir::Value operand = op.getOperand(i);
      const size_t rank = shape_of(operand).size();
      Cut operand_cut{operands[i].outSharding.size() == rank ? operands[i].outSharding : ones(operand),
                      operands[i].outSplit.size() == rank ? operands[i].outSplit : ones(operand)};
      merge(out.cuts, operand, operand_cut);
    }
  }
  return out;
}

// A value's range on tile 0 (the largest) under its sharding.
std::vector<int64_t> tile_extent(mlir::Value value, llvm::ArrayRef<int32_t> sharding) {
  std::vector<int64_t> extent;
  llvm::ArrayRef<int64_t> shape = shape_of(value);
  for (size_t d = 0; d < shape.size(); ++d) extent.push_back(ceil_div(shape[d], sharding[d]));
  return extent;
}

// The per-step shape of every value for the primary result's `slice`, through
// ShardingInterface::temporalSliceShape (what DS_TileSplit sizes; DS_SlicePropagate then takes the
// exact windows).
llvm::DenseMap<mlir::Value, std::vector<int64_t>> step_shapes(GroupOp group, llvm::ArrayRef<int64_t> slice) {
  llvm::DenseMap<mlir::Value, std::vector<int64_t>> shapes;
  auto ask = [&](mlir::Value value, std::vector<int64_t> shape) {
    auto [it, inserted] = shapes.try_emplace(value, shape);
    if (inserted) return;
    for (size_t d = 0; d < shape.size(); ++d) it->second[d] = std::max(it->second[d], shape[d]);
  };
  const mlir::Value primary_value = primaryValue(group);
  for (mlir::Value result : group.getYield()->getOperands()) {
    ask(result, shape_of(result) == shape_of(primary_value) ? std::vector<int64_t>(slice.begin(), slice.end())
                                                            : std::vector<int64_t>(shape_of(result)));
  }
  for (mlir::Operation& op : llvm::reverse(group.getBodyBlock().without_terminator())) {
    if (op.getNumResults() != 1) continue;
    auto found = shapes.find(op.getResult(0));
    auto rules = mlir::dyn_cast<ShardingInterface>(&op);
    if (found == shapes.end() || !rules) continue;
    SliceParam param{found->second};
    const std::vector<SliceParam> operands = rules.temporalSliceShape(param);
    for (unsigned i = 0; i < op.getNumOperands(); ++i) {
      mlir::Value operand = op.getOperand(i);
      const bool given = i < operands.size() && operands[i].shape.size() == shape_of(operand).size();
      ask(operand, given ? operands[i].shape : std::vector<int64_t>(shape_of(operand)));
    }
  }
  return shapes;
}

// The values the body defines, with their cut, at `slices` (step-invariant: the slice is the
// whole range on the tile).
std::vector<ValueSlicing> trial_values(GroupOp group, const Propagation& cuts,
                                       const llvm::DenseMap<mlir::Value, std::vector<int64_t>>& slices) {
  std::vector<ValueSlicing> values;
  for (mlir::Operation& op : group.getBodyBlock().without_terminator()) {
    if (op.getNumResults() != 1) continue;
    mlir::Value value = op.getResult(0);
    ValueSlicing v;
    v.value = value;
    auto cut = cuts.cuts.find(value);
    v.sharding = cut != cuts.cuts.end() ? cut->second.sharding : ones(value);
    const std::vector<int64_t> extent = tile_extent(value, v.sharding);
    auto slice = slices.find(value);
    v.slice = slice != slices.end() ? slice->second : extent;
    for (size_t d = 0; d < v.slice.size(); ++d) v.slice[d] = std::min(v.slice[d], extent[d]);
    v.stepInvariant = v.slice == extent;
    values.push_back(std::move(v));
  }
  return values;
}

// DS_SlicePropagate: every value's largest window over all tiles and steps, and whether a
// tile's window of it stays the same from step to step.
mlir::LogicalResult propagate_windows(GroupOp group, DataSplit& split) {
  const llvm::ArrayRef<int64_t> shape = shape_of(primaryValue(group));
  const int64_t tiles = product(llvm::ArrayRef<int32_t>(split.sharding));
  llvm::DenseMap<mlir::Value, std::vector<int64_t>> largest;
  llvm::DenseMap<mlir::Value, bool> varies;
  for (int64_t tile = 0; tile < tiles; ++tile) {
    llvm::DenseMap<mlir::Value, WindowParam> first;
    for (int64_t step = 0; step < split.steps; ++step) {
      const WindowParam primary = primaryWindow(shape, split.sharding, split.slice, tile, step);
      if (isEmpty(primary)) continue;
      mlir::FailureOr<llvm::DenseMap<mlir::Value, WindowParam>> windows = bodyWindows(group, primary);
      if (mlir::failed(windows)) return mlir::failure();
      for (auto& [value, window] : *windows) {
        auto [big, fresh] = largest.try_emplace(value, window.size);
        if (!fresh) {
          for (size_t d = 0; d < window.size.size(); ++d) big->second[d] = std::max(big->second[d], window.size[d]);
        }
        auto [seen, new_on_tile] = first.try_emplace(value, window);
        if (!new_on_tile && (seen->second.start != window.start || seen->second.size != window.size)) {
          varies[value] = true;
        }
      }
    }
  }
  for (ValueSlicing& v : split.values) {
    auto big = largest.find(v.value);
    if (big == largest.end()) {
      // Nothing reads it: it is computed whole, once.
      v.slice.assign(shape_of(v.value).begin(), shape_of(v.value).end());
      v.stepInvariant = true;
      continue;
    }
    v.slice = big->second;
    v.stepInvariant = !varies.lookup(v.value);
  }
  return mlir::success();
}

// The group's tiles: its dev_region, else the chip's mesh.
int32_t group_tiles(GroupOp group, const sim::ChipConfig& chip) {
  if (auto region = group.getDevRegionAttr()) return region.getWidth() * region.getHeight();
  return chip.tile_count();
}

// Whether a value of the body sits in SPM: every op result except a store's (in DDR) and a
// constant the consumer reads in DDR (bypass_codegen).
bool heldInSpm(mlir::Value value) {
  mlir::Operation* op = value.getDefiningOp();
  if (!op || mlir::isa<StoreVarOp>(op)) return false;
  if (auto load = mlir::dyn_cast<LoadConstOp>(op); load && load.getBypassCodegen().value_or(false)) return false;
  return true;
}

}  // namespace

uint64_t spmBytesNeeded(const DataSplit& split, const sim::ChipConfig& chip) {
  uint64_t bytes = 0;
  for (const ValueSlicing& v : split.values) {
    if (!heldInSpm(v.value)) continue;
    auto type = v.value.getType().cast<mlir::RankedTensorType>();
    bytes += window_bytes(type, v.slice) * (v.stepInvariant ? 1 : 2);
    mlir::Operation* op = v.value.getDefiningOp();
    try {
      bytes += queryOpCost(op, v.slice, chip).immBytes;
    } catch (const Error&) {
      // A slice the op's cost query does not take: the whole op's scratch, an upper bound.
      if (auto lib = mlir::dyn_cast<OpLibInterface>(op)) bytes += lib.getImmSpSize();
    }
  }
  return bytes;
}

PlanStatus dataSplit(GroupOp group, llvm::ArrayRef<int32_t> sharding, const sim::ChipConfig& chip, DataSplit& split) {
  // DS_SpaceInit.
  const mlir::Value primary = primaryValue(group);
  const llvm::ArrayRef<int64_t> shape = shape_of(primary);
  split = DataSplit{};
  split.sharding.assign(sharding.begin(), sharding.end());
  if (sharding.size() != shape.size() || product(sharding) > group_tiles(group, chip)) return PlanStatus::NotSplittable;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (sharding[d] < 1 || sharding[d] > shape[d] || ceil_div(shape[d], sharding[d]) * (sharding[d] - 1) >= shape[d]) {
      return PlanStatus::NotSplittable;
    }
  }
  // A group working in DDR is not split: one tile, one step, nothing in SPM.
  const bool in_ddr = group.getGroupTag().value_or(0) == kGroupTagInDdr;
  if (in_ddr && product(sharding) != 1) return PlanStatus::NotSplittable;
  // Results of another shape than the primary one are computed whole: only one tile can.
  for (mlir::Value result : group.getYield()->getOperands()) {
    if (shape_of(result) != shape && product(sharding) != 1) return PlanStatus::NotSplittable;
  }

  // DS_TileSharding.
  const std::vector<int32_t> no_steps(shape.size(), 1);
  Propagation cuts = propagate(group, {split.sharding, no_steps});
  if (cuts.refusedBy) return PlanStatus::NotSplittable;

  // DS_TileSplit, then DS_SlicePropagate on a slice that fits.
  const std::vector<int64_t> range = tile_extent(primary, split.sharding);
  split.slice = range;
  for (;;) {
    const std::vector<int64_t> per_dim = stepsPerDim(range, split.slice);
    split.steps = product(llvm::ArrayRef<int64_t>(per_dim));
    split.values = trial_values(group, cuts, step_shapes(group, split.slice));
    if (in_ddr || spmBytesNeeded(split, chip) <= chip.spm_bytes) {
      if (mlir::failed(propagate_windows(group, split))) return PlanStatus::NotSplittable;
      if (in_ddr || spmBytesNeeded(split, chip) <= chip.spm_bytes) return PlanStatus::Ok;
    }
    // Halve the outermost dimension that can be walked in more steps.
    bool halved = false;
    for (size_t d = 0; d < shape.size() && !halved; ++d) {
      if (split.slice[d] == 1) continue;
      std::vector<int64_t> slice = split.slice;
      slice[d] = ceil_div(slice[d], 2);
      std::vector<int32_t> steps;
      for (int64_t n : stepsPerDim(range, slice)) steps.push_back(int32_t(n));
      Propagation walked = propagate(group, {split.sharding, steps});
      if (walked.refusedBy) continue;
      cuts = std::move(walked);
      split.slice = slice;
      halved = true;
    }
    if (!halved) return PlanStatus::SpmAllocFailed;
  }
}

namespace {

std::string joined(llvm::ArrayRef<int32_t> parts) {
  std::string text;
  for (int32_t p : parts) text += (text.empty() ? "" : ", ") + std::to_string(p);
  return "[" + text + "]";
}

// The reason dataSplit gave NotSplittable for `sharding`, as a diagnostic on the group.
mlir::LogicalResult explain_not_splittable(GroupOp group, llvm::ArrayRef<int32_t> sharding,
                                           const sim::ChipConfig& chip) {
  const mlir::Value primary = primaryValue(group);
  const llvm::ArrayRef<int64_t> shape = shape_of(primary);
  if (sharding.size() != shape.size()) {
    return group.emitOpError() << "sharding " << joined(sharding) << " has " << sharding.size()
                               << " dimensions but the primary result has " << shape.size();
  }
  if (product(sharding) > group_tiles(group, chip)) {
    return group.emitOpError() << "sharding " << joined(sharding) << " needs " << product(sharding)
                               << " tiles but the group has " << group_tiles(group, chip);
  }
  for (size_t d = 0; d < shape.size(); ++d) {
    if (ceil_div(shape[d], sharding[d]) * (sharding[d] - 1) >= shape[d]) {
      return group.emitOpError() << "sharding " << joined(sharding) << " leaves a part of dimension " << d << " (of "
                                 << shape[d] << ") empty";
    }
  }
  if (product(sharding) != 1 && group.getGroupTag().value_or(0) == kGroupTagInDdr) {
    return group.emitOpError() << "works in DDR (group_tag 2) and is not split, but the sharding is "
                               << joined(sharding);
  }
  for (mlir::Value result : group.getYield()->getOperands()) {
    if (shape_of(result) != shape && product(sharding) != 1) {
      return group.emitOpError() << "yields results of different shapes: only one tile can compute them, but the "
                                    "sharding is "
                                 << joined(sharding);
    }
  }
  const Propagation cuts =
      propagate(group, {std::vector<int32_t>(sharding.begin(), sharding.end()), std::vector<int32_t>(shape.size(), 1)});
  if (cuts.refusedBy) {
    mlir::InFlightDiagnostic diagnostic = group.emitOpError() << "cannot be cut as " << joined(sharding) << ": '"
                                                              << cuts.refusedBy->getName() << "' cannot follow it";
    diagnostic.attachNote(cuts.refusedBy->getLoc()) << "this op";
    return diagnostic;
  }
  return group.emitOpError() << "cannot be cut as " << joined(sharding);
}

struct DataSplitPass : public DataSplitBase<DataSplitPass> {
  void runOnOperation() override {
    mlir::FailureOr<sim::ChipConfig> chip = chipOption(getOperation(), "data-split", chipConfig);
    if (mlir::failed(chip)) return signalPassFailure();
    getOperation().walk([&](GroupOp group) {
      if (mlir::failed(split_group(group, *chip))) signalPassFailure();
    });
  }

  mlir::LogicalResult split_group(GroupOp group, const sim::ChipConfig& chip) {
    const mlir::Value primary = primaryValue(group);
    const llvm::ArrayRef<int64_t> shape = shape_of(primary);
    std::vector<std::vector<int32_t>> candidates;
    if (group.getGroupTag().value_or(0) == kGroupTagInDdr) {
      candidates.push_back(ones(primary));
    } else if (auto given = group.getShardingAttr()) {
      candidates.emplace_back(given.asArrayRef().begin(), given.asArrayRef().end());
    } else {
      // The best-ordered cut the group's ops accept (the all-ones cut always is).
      auto type = primary.getType().cast<mlir::RankedTensorType>();
      const uint64_t element = std::max<uint64_t>(1, window_bytes(type, {1}));
      candidates = shardingCandidates(shape, group_tiles(group, chip), element, chip.ddr.burst_bytes);
    }
    GroupPlan plan;
    for (const std::vector<int32_t>& sharding : candidates) {
      plan.status = dataSplit(group, sharding, chip, plan.split);
      if (plan.status != PlanStatus::NotSplittable) break;
    }
    if (plan.status == PlanStatus::NotSplittable) return explain_not_splittable(group, candidates.front(), chip);
    if (plan.status == PlanStatus::SpmAllocFailed) {
      return group.emitOpError() << "does not fit the tile's SPM of " << chip.spm_bytes
                                 << " bytes at any slice: its buffers need " << spmBytesNeeded(plan.split, chip)
                                 << " bytes at the smallest";
    }
    writePlan(group, plan);
    return mlir::success();
  }
};

}  // namespace

std::unique_ptr<mlir::Pass> createDataSplitPass() { return std::make_unique<DataSplitPass>(); }

}  // namespace tg::compiler::tx8be
