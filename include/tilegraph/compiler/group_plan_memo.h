#pragma once
// The sharding search's memo of plans, shared across compiles, and what the search did. Needs no
// MLIR header: compile_graph's callers hold a memo through CompileOptions.
//
// group-cost searches one group of each structure (GroupKey: docs/compiler.md) and gives the
// plan to every identical group. Within one module that is a memo of its own; a backend that
// compiles a graph's chip runs one by one (the tx8 backend, tx8::compile_and_run_chip_runs)
// hands the same GroupPlanMemo to each compile_graph call, so a layer identical to one planned in
// an earlier run is not searched again either. Plans are kept per chip configuration.
#include <cstdint>
#include <memory>

namespace tg::compiler {

// What a group-cost run did.
struct GroupCostCounts {
  int64_t searched = 0;    // groups whose candidates were searched
  int64_t reused = 0;      // groups that took the plan of an identical group planned before
  int64_t earlier = 0;     // of `reused`, those whose plan an earlier compile searched (a shared memo)
  int64_t candidates = 0;  // candidates run through the stages
};

// Whether group-cost splits a lone matmul's K (docs/compiler.md, "matmul on the chip"): Search
// weighs its K splits against the plans keeping K whole by their estimates (the default); Always
// takes the cheapest K split of a matmul that qualifies (K whole when none fits); Never keeps K
// whole.
enum class MatmulKSplit { Search, Always, Never };

// Opaque here (src/compiler/Transforms/GroupPlanMemo.h); thread-safe.
class GroupPlanMemo;
std::shared_ptr<GroupPlanMemo> make_group_plan_memo();

}  // namespace tg::compiler
