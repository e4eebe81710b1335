#include "GroupPlanMemo.h"

#include <llvm/ADT/DenseMap.h>

namespace tg::compiler {

namespace tx8be {

namespace {

std::vector<mlir::Operation*> bodyOps(GroupOp group) {
  std::vector<mlir::Operation*> ops;
  for (mlir::Operation& op : group.getBodyBlock()) ops.push_back(&op);
  return ops;
}

}  // namespace

PlanTemplate planTemplate(const GroupPlan& plan, GroupOp group) {
  llvm::DenseMap<mlir::Operation*, int32_t> opIndex;
  for (mlir::Operation* op : bodyOps(group)) opIndex[op] = int32_t(opIndex.size());
  auto position = [&](mlir::Value value) -> BodyPosition {
    if (auto argument = value.dyn_cast<mlir::BlockArgument>()) return {-1, int32_t(argument.getArgNumber())};
    return {opIndex.lookup(value.getDefiningOp()), int32_t(value.cast<mlir::OpResult>().getResultNumber())};
  };
  PlanTemplate out;
  out.plan = plan;
  for (ValueSlicing& v : out.plan.split.values) {
    out.values.push_back(position(v.value));
    v.value = nullptr;
  }
  for (std::vector<PipelineItem>& cycle : out.plan.pipeline.cycles) {
    std::vector<int32_t>& ops = out.items.emplace_back();
    for (PipelineItem& item : cycle) {
      ops.push_back(opIndex.lookup(item.op));
      item.op = nullptr;
    }
  }
  for (SpmBuffer& buffer : out.plan.spm.buffers) {
    out.bufferValues.push_back(buffer.value ? position(buffer.value) : BodyPosition{-2, 0});
    out.bufferScratchOf.push_back(buffer.scratchOf ? opIndex.lookup(buffer.scratchOf) : -1);
    buffer.value = nullptr;
    buffer.scratchOf = nullptr;
  }
  return out;
}

GroupPlan bindPlan(const PlanTemplate& plan, GroupOp group) {
  const std::vector<mlir::Operation*> ops = bodyOps(group);
  auto value = [&](BodyPosition p) -> mlir::Value {
    if (p.op == -1) return group.getBodyBlock().getArgument(unsigned(p.index));
    return ops[size_t(p.op)]->getResult(unsigned(p.index));
  };
  GroupPlan out = plan.plan;
  for (size_t i = 0; i < out.split.values.size(); ++i) out.split.values[i].value = value(plan.values[i]);
  for (size_t c = 0; c < out.pipeline.cycles.size(); ++c) {
    for (size_t i = 0; i < out.pipeline.cycles[c].size(); ++i)
      out.pipeline.cycles[c][i].op = ops[size_t(plan.items[c][i])];
  }
  for (size_t i = 0; i < out.spm.buffers.size(); ++i) {
    if (plan.bufferValues[i].op != -2) out.spm.buffers[i].value = value(plan.bufferValues[i]);
    if (plan.bufferScratchOf[i] >= 0) out.spm.buffers[i].scratchOf = ops[size_t(plan.bufferScratchOf[i])];
  }
  return out;
}

}  // namespace tx8be

uint64_t GroupPlanMemo::beginCompile() {
  std::lock_guard lock(mutex_);
  return ++compiles_;
}

const GroupPlanMemo::Entry* GroupPlanMemo::find(const std::string& key) {
  std::lock_guard lock(mutex_);
  auto it = entries_.find(key);
  return it == entries_.end() ? nullptr : &it->second;
}

void GroupPlanMemo::insert(const std::string& key, Entry entry) {
  std::lock_guard lock(mutex_);
  entries_.emplace(key, std::move(entry));
}

std::shared_ptr<GroupPlanMemo> make_group_plan_memo() { return std::make_shared<GroupPlanMemo>(); }

}  // namespace tg::compiler
