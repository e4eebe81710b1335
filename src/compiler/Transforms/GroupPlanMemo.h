#pragma once
// The memo of group-cost (tilegraph/compiler/group_plan_memo.h): plans by chip and GroupKey, kept
// apart from any module. A plan names its ops and values by pointer; a template names them by
// position in the group's body (op i, its result r; or block argument r), so it outlives the
// module and the MLIRContext it was searched in and binds to any group of the same key.
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "tilegraph/compiler/Dialect/Tx8be/Transforms/GroupPlan.h"
#include "tilegraph/compiler/group_plan_memo.h"

namespace tg::compiler {

namespace tx8be {

// A value of a group body by position: result `index` of body op `op`, or block argument `index`
// when op is -1.
struct BodyPosition {
  int32_t op = -1;
  int32_t index = 0;
};

struct PlanTemplate {
  GroupPlan plan;                           // its ops and values null: the positions below name them
  std::vector<BodyPosition> values;         // of plan.split.values
  std::vector<std::vector<int32_t>> items;  // the op of each pipeline item
  std::vector<BodyPosition> bufferValues;   // of plan.spm.buffers (op -2: none, scratch)
  std::vector<int32_t> bufferScratchOf;     // -1: none
};

// `plan`, made for `group`, by position; and back onto a group of the same GroupKey.
PlanTemplate planTemplate(const GroupPlan& plan, GroupOp group);
GroupPlan bindPlan(const PlanTemplate& plan, GroupOp group);

}  // namespace tx8be

class GroupPlanMemo {
 public:
  struct Entry {
    tx8be::PlanTemplate plan;
    int32_t groupId = -1;  // the group it was searched for
    uint64_t compile = 0;  // the group-cost run that searched it
  };
  // A number for each group-cost run that uses the memo.
  uint64_t beginCompile();
  // The entry for `key` (chip and GroupKey), or null.
  const Entry* find(const std::string& key);
  void insert(const std::string& key, Entry entry);

 private:
  std::mutex mutex_;
  uint64_t compiles_ = 0;
  std::map<std::string, Entry> entries_;  // entries never move once inserted
};

}  // namespace tg::compiler
