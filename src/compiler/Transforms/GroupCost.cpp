// The group-cost pass (the TX8 toolchain's GroupCostPass): for every group, the plan of least
// estimated cycles over its sharding candidates. For a group:
//   1. bail out when it works in DDR (group_tag 2): nothing of it sits in SPM; its estimate is its
//      moves' (estimateMoveCycles);
//   2. the template memo: a group whose GroupKey (GroupCost.h) an earlier group had takes that
//      group's plan, bound to its own ops by position (GroupPlanMemo.h), and `template_id` = that
//      group's id when it is of this module (the 32 identical layers of a llama model are searched
//      once). The memo is this run's own, or one handed in and shared with other compiles (the
//      chip runs of one graph), keyed by the chip too;
//   3. the slice space (SliceSpace): the candidates of ShardingCandidates.h for the primary result over the
//      group's tiles (its dev_region, else the chip's mesh), each run through the stages
//      dataSplit -> buildPipeline -> allocateSpm -> estimateCycles, and for a lone matmul also
//      its K splits (PanelMatmul.h: panels of 128, 256 and 512, each with and without sharing
//      the operand panels over the NoC) through panelSplit instead of dataSplit; a candidate an
//      op refuses or whose buffers fit no slice is skipped;
//   4. the cheapest (the first of equal ones, in the candidates' order) is written (writePlan);
//      when none fits, an error names the group and the least SPM a candidate would need.
#include <iterator>
#include <limits>
#include <memory>
#include <optional>

#include <llvm/Support/raw_ostream.h>
#include <mlir/Pass/Pass.h>
#include <nlohmann/json.hpp>

#include "ChipOption.h"
#include "DataSplit.h"
#include "GroupCost.h"
#include "GroupPlanMemo.h"
#include "GroupTags.h"
#include "PanelMatmul.h"
#include "ShardingCandidates.h"
#include "WindowBytes.h"
#include "tilegraph/compiler/Dialect/Tx8be/Transforms/GroupPlan.h"
#include "tilegraph/compiler/Dialect/Tx8be/Transforms/Passes.h"
#include "tilegraph/compiler/Dialect/Tx8be/Transforms/SliceWindows.h"
#include "tilegraph/sim/chip_config.h"

namespace tg::compiler::tx8be {

#define GEN_PASS_CLASSES
#include "tilegraph/compiler/Dialect/Tx8be/Transforms/Passes.h.inc"

namespace {

// Attributes that name or place rather than describe: left out of the key.
bool keyed(llvm::StringRef name) {
  static constexpr llvm::StringLiteral kUnkeyed[] = {"group_id", "template_id", "const_map_id", "tile_parallel",
                                                     "tx8be.step_invariant"};
  return !llvm::is_contained(kUnkeyed, name);
}

std::vector<mlir::Operation*> body_ops(GroupOp group) {
  std::vector<mlir::Operation*> ops;
  for (mlir::Operation& op : group.getBodyBlock()) ops.push_back(&op);
  return ops;
}

int32_t group_tiles(GroupOp group, const sim::ChipConfig& chip) {
  if (auto region = group.getDevRegionAttr()) return region.getWidth() * region.getHeight();
  return chip.tile_count();
}

// The TX8 toolchain's SliceSpace: one group's search, its candidates (the ShardingLevel) and
// what the stages made of them so far.
struct SliceSpace {
  GroupOp group;
  const sim::ChipConfig& chip;
  std::vector<std::vector<int32_t>> shardings;
  std::optional<GroupPlan> best;  // the cheapest candidate that fits, the first of equal ones
  uint64_t leastNeeded = std::numeric_limits<uint64_t>::max();  // SPM bytes, over the candidates that did not fit

  SliceSpace(GroupOp g, const sim::ChipConfig& c) : group(g), chip(c) {
    auto type = primaryValue(group).getType().cast<mlir::RankedTensorType>();
    const uint64_t element = std::max<uint64_t>(1, window_bytes(type, {1}));
    shardings = shardingCandidates(type.getShape(), group_tiles(group, chip), element, chip.ddr.burst_bytes);
  }

  // One candidate through dataSplit -> buildPipeline -> allocateSpm -> estimateCycles; with
  // kPanel > 0, the K split (PanelMatmul.h) of a qualifying matmul group in panels of kPanel.
  void tryCandidate(llvm::ArrayRef<int32_t> sharding, int64_t kPanel = 0, bool shareOperands = false) {
    GroupPlan plan;
    plan.status = kPanel > 0 ? panelSplit(group, sharding, kPanel, shareOperands, chip, plan.split)
                             : dataSplit(group, sharding, chip, plan.split);
    if (plan.status == PlanStatus::SpmAllocFailed && kPanel == 0)
      leastNeeded = std::min(leastNeeded, spmBytesNeeded(plan.split, chip));
    if (plan.status != PlanStatus::Ok) return;
    plan.pipeline = buildPipeline(group, plan.split);
    plan.status = allocateSpm(group, plan.split, plan.pipeline, chip, plan.spm);
    if (plan.status != PlanStatus::Ok) {
      leastNeeded = std::min(leastNeeded, plan.spm.peak);
      return;
    }
    plan.estimatedCycles = estimateCycles(group, plan, chip);
    if (!best || plan.estimatedCycles < best->estimatedCycles) best = std::move(plan);
  }
};

const char* kSplitName(MatmulKSplit mode) {
  switch (mode) {
    case MatmulKSplit::Search: return "search";
    case MatmulKSplit::Always: return "always";
    case MatmulKSplit::Never: return "never";
  }
  return "";
}

struct GroupCostPass : public GroupCostBase<GroupCostPass> {
  GroupCostPass(GroupCostCounts* counts, std::shared_ptr<GroupPlanMemo> memo, MatmulKSplit kSplitMode)
      : counts_out(counts), shared(std::move(memo)), kSplitMode(kSplitMode) {}
  GroupCostCounts* counts_out;
  std::shared_ptr<GroupPlanMemo> shared;  // null: a memo for each run alone
  MatmulKSplit kSplitMode;                // the constructor's, unless the k-split option says otherwise
  GroupCostCounts counts;
  std::shared_ptr<GroupPlanMemo> memo;
  uint64_t compile = 0;  // this run's number in the memo
  std::string chipKey;   // the chip's configuration, the first part of every memo key
  sim::ChipConfig chip;

  void runOnOperation() override {
    mlir::FailureOr<sim::ChipConfig> configured = chipOption(getOperation(), "group-cost", chipConfig);
    if (mlir::failed(configured)) return signalPassFailure();
    chip = *configured;
    if (kSplit != kSplitName(MatmulKSplit::Search)) {
      if (kSplit == kSplitName(MatmulKSplit::Always)) {
        kSplitMode = MatmulKSplit::Always;
      } else if (kSplit == kSplitName(MatmulKSplit::Never)) {
        kSplitMode = MatmulKSplit::Never;
      } else {
        getOperation().emitError() << "group-cost: k-split must be search, always or never, got '" << kSplit << "'";
        return signalPassFailure();
      }
    }
    chipKey = sim::to_json(chip).dump() + "\nk-split " + kSplitName(kSplitMode);
    memo = shared ? shared : make_group_plan_memo();
    compile = memo->beginCompile();
    counts = {};
    getOperation().walk([&](GroupOp group) {
      if (mlir::failed(plan_group(group))) signalPassFailure();
    });
    memo.reset();
    searched = uint64_t(counts.searched);
    reused = uint64_t(counts.reused);
    candidates = uint64_t(counts.candidates);
    if (counts_out) *counts_out = counts;
  }

  mlir::LogicalResult plan_group(GroupOp group) {
    if (group.getGroupTag().value_or(0) == kGroupTagInDdr) {
      const uint64_t cycles = estimateMoveCycles(group, chip);
      group.setEstimatedCyclesAttr(mlir::IntegerAttr::get(mlir::IntegerType::get(&getContext(), 64), int64_t(cycles)));
      return mlir::success();
    }
    const std::string key = chipKey + "\n" + groupKey(group);
    if (const GroupPlanMemo::Entry* found = memo->find(key)) {
      writePlan(group, bindPlan(found->plan, group));
      if (found->compile == compile) {
        group.setTemplateIdAttr(mlir::IntegerAttr::get(mlir::IntegerType::get(&getContext(), 32), found->groupId));
      } else {
        ++counts.earlier;
      }
      ++counts.reused;
      return mlir::success();
    }
    std::optional<GroupPlan> best = search(group);
    if (!best) return mlir::failure();
    writePlan(group, *best);
    memo->insert(key, GroupPlanMemo::Entry{planTemplate(*best, group), int32_t(group.getGroupId()), compile});
    ++counts.searched;
    return mlir::success();
  }

  std::optional<GroupPlan> search(GroupOp group) {
    SliceSpace space(group, chip);
    const std::optional<PanelMatmul> matmul = kSplitMode == MatmulKSplit::Never ? std::nullopt : panelMatmul(group);
    auto tryKWhole = [&](llvm::ArrayRef<int32_t> sharding) {
      ++counts.candidates;
      space.tryCandidate(sharding);
    };
    // The K splits: each panel size that differs once clipped to K, its operand panels loaded by
    // every tile or shared over the NoC.
    auto tryKSplits = [&](llvm::ArrayRef<int32_t> sharding) {
      for (size_t i = 0; matmul && i < std::size(kPanelCandidates); ++i) {
        if (i > 0 && kPanelCandidates[i - 1] >= matmul->k) break;  // the same panel once clipped to K
        for (bool share : {false, true}) {
          ++counts.candidates;
          space.tryCandidate(sharding, kPanelCandidates[i], share);
        }
      }
    };
    if (matmul && kSplitMode == MatmulKSplit::Always) {
      for (const std::vector<int32_t>& sharding : space.shardings) tryKSplits(sharding);
      if (!space.best) {
        for (const std::vector<int32_t>& sharding : space.shardings) tryKWhole(sharding);
      }
    } else {
      for (const std::vector<int32_t>& sharding : space.shardings) {
        tryKWhole(sharding);
        tryKSplits(sharding);
      }
    }
    if (!space.best) {
      mlir::InFlightDiagnostic error = group.emitOpError() << "(group " << int32_t(group.getGroupId())
                                                           << ") fits no sharding candidate in the tile's SPM of "
                                                           << chip.spm_bytes << " bytes";
      if (space.leastNeeded != std::numeric_limits<uint64_t>::max()) {
        error << ": the smallest needs " << space.leastNeeded << " bytes";
      }
    }
    return std::move(space.best);
  }
};

}  // namespace

std::string groupKey(GroupOp group) {
  std::string key;
  llvm::raw_string_ostream os(key);
  os << "tag " << group.getGroupTag().value_or(0) << " tiles ";
  if (auto region = group.getDevRegionAttr()) {
    os << region.getWidth() << "x" << region.getHeight();
  } else {
    os << "mesh";
  }
  os << "\n";
  const std::vector<mlir::Operation*> ops = body_ops(group);
  llvm::DenseMap<mlir::Operation*, size_t> index_of;
  for (size_t i = 0; i < ops.size(); ++i) index_of[ops[i]] = i;
  for (mlir::BlockArgument argument : group.getBodyBlock().getArguments()) os << argument.getType() << " ";
  os << "\n";
  for (mlir::Operation* op : ops) {
    os << op->getName() << "(";
    for (mlir::Value operand : op->getOperands()) {
      if (auto argument = operand.dyn_cast<mlir::BlockArgument>()) {
        os << "arg" << argument.getArgNumber();
      } else {
        os << "op" << index_of.lookup(operand.getDefiningOp()) << "."
           << operand.cast<mlir::OpResult>().getResultNumber();
      }
      os << ":" << operand.getType() << ",";
    }
    os << ") -> (";
    for (mlir::Type type : op->getResultTypes()) os << type << ",";
    os << ") {";
    for (mlir::NamedAttribute attribute : op->getAttrs()) {
      const llvm::StringRef name = attribute.getName().getValue();
      if (!keyed(name)) continue;
      os << name << "=";
      if (name == "value") {
        // Constant data: its type, not its values or its key.
        if (auto elements = attribute.getValue().dyn_cast<mlir::ElementsAttr>()) {
          os << elements.getType();
        } else if (auto external = attribute.getValue().dyn_cast<ExternalDataAttr>()) {
          os << "external " << external.getBytes();
        }
      } else if (auto dev = attribute.getValue().dyn_cast<DevAttr>()) {
        os << stringifyLayoutMode(dev.getMemLayout());
      } else {
        os << attribute.getValue();
      }
      os << ",";
    }
    os << "}\n";
  }
  return key;
}

std::unique_ptr<mlir::Pass> createGroupCostPass() {
  return std::make_unique<GroupCostPass>(nullptr, nullptr, MatmulKSplit::Search);
}
std::unique_ptr<mlir::Pass> createGroupCostPass(GroupCostCounts* counts, std::shared_ptr<GroupPlanMemo> memo,
                                                MatmulKSplit kSplit) {
  return std::make_unique<GroupCostPass>(counts, std::move(memo), kSplit);
}

}  // namespace tg::compiler::tx8be
