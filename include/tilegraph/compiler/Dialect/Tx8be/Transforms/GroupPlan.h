#pragma once
// The plan of one group, as the back-end passes build it (the TX8 toolchain's GroupCostPass and
// its stages): how the group is cut over tiles and steps (data split), what runs together in each
// pipeline cycle (time steps), where every buffer sits in SPM (SPM allocation), and what it costs
// (estimate). group-cost runs the stages for every sharding candidate and keeps the cheapest; the
// stand-alone passes (data-split, sw-pipeline, spm-alloc, estimate) run one stage on the plan a
// group carries, so each can be tested alone.
//
// In the IR a plan is attributes (readPlan / writePlan), which is what codegen reads:
//   on the group:  sharding (parts per dim of the primary result over the group's tiles), slice
//                  (its per-step shape on one tile), steps (per tile), pipeline (one
//                  DenseI64ArrayAttr per pipeline cycle: (op index in the body, step) pairs),
//                  spm_alloc_size (the allocation's peak), spm_lower_bound, estimated_cycles;
//                  a K-split matmul group (below) also tx8be.k_panel and, when it shares its
//                  operand panels over the NoC, the unit attribute tx8be.noc_share;
//   on each op of the body: tile_parallel.shape_spatial_sharding (its result's parts),
//                  dev_info.temporal_mem_slice (its result's largest per-step window),
//                  dev_info.multi_buf_en / multi_buf_num, dev_info.mem_addr (SPM offset of each
//                  buffer copy), dev_info.imm_size / imm_addr (scratch), dev_info.source_type
//                  (pipeline stage: 0 load, 1 compute, 2 store), the unit attribute
//                  tx8be.step_invariant when its result's window is the same every step.
//
// Windows: on tile t the primary result's range is t's part of the sharding grid (parts as equal
// as ceil division makes them, the last one shorter); step s walks that range in `slice`-shaped
// windows, the innermost dimension fastest. Every other value's window for (t, s) comes from its
// consumers' windows through ShardingInterface::backWindow (the bounding box when there are
// several); a value whose window is the same for every step (a weight) is loaded once per tile.
//
// K split (kPanel > 0; only for a lone matmul: loads -> matmul -> store, PanelMatmul.h): the
// steps walk each result window in panels of K, the panel fastest (step s: window s / panels,
// panel s % panels); the f32 result window stays in SPM as the accumulator (the first panel
// overwrites it, the others add to it) and is stored after the last panel. With shareOperands,
// the tiles whose operand panel is the same in a step (one grid row shares the activation rows,
// one grid column the weight rows) each load a part of it and send it to the others over the
// NoC (DTE) instead of each loading all of it.
#include <cstdint>
#include <vector>

#include <mlir/IR/Operation.h>
#include <mlir/IR/Value.h>
#include <mlir/Support/LogicalResult.h>

#include "tilegraph/compiler/Dialect/Tx8be/IR/Tx8be.h"
#include "tilegraph/sim/chip_config.h"

namespace tg::compiler::tx8be {

// How a candidate fared (the TX8 toolchain's SSTATUS_*).
enum class PlanStatus {
  Ok,
  NotSplittable,   // an op cannot follow the sharding
  SpmAllocFailed,  // the buffers do not fit the tile's SPM at any slice
};

// DS: one value of the group body and how it is cut.
struct ValueSlicing {
  mlir::Value value;
  std::vector<int32_t> sharding;  // parts per dimension over tiles
  std::vector<int64_t> slice;     // its largest per-step window on one tile
  bool stepInvariant = false;     // the same window every step: loaded or computed once
};

struct DataSplit {
  std::vector<int32_t> sharding;  // the primary result's
  std::vector<int64_t> slice;
  int64_t steps = 1;                 // per tile
  std::vector<ValueSlicing> values;  // every value the body defines, in body order
  int64_t kPanel = 0;                // K per step of a K-split matmul; 0: K whole
  bool shareOperands = false;        // a K split's operand panels shared over the NoC
};

// TS: the ops that run together in one pipeline cycle. An engine runs its items of a cycle in
// order: several of one step (a load_var and the weights loaded with it, an elementwise chain on
// the CGRA), or a step-invariant item beside a step's; the steps' own frames that meet in one
// cycle are on different engines.
enum class PipelineEngine { Load, Store, NE, CT, TDMA };
struct PipelineItem {
  mlir::Operation* op = nullptr;
  int64_t step = 0;
  PipelineEngine engine = PipelineEngine::CT;
};
struct Pipeline {
  std::vector<std::vector<PipelineItem>> cycles;
};

// SA: one SPM buffer (a value's, or an op's scratch) with its lifetime in pipeline cycles. The
// values of an in-place chain (OpAttr::memInplace) share one buffer: each is listed, with the
// same offset, copies and lifetime. bytes is one copy rounded up to 256 (SPM alignment).
struct SpmBuffer {
  mlir::Value value;  // null for scratch
  mlir::Operation* scratchOf = nullptr;
  uint64_t bytes = 0;  // one copy
  int32_t copies = 1;  // multi-buffering
  int64_t firstCycle = 0, lastCycle = 0;
  uint64_t offset = 0;  // of copy 0; copy i at offset + i * bytes
};
struct SpmPlan {
  std::vector<SpmBuffer> buffers;
  uint64_t peak = 0;        // highest byte used
  uint64_t lowerBound = 0;  // the most bytes live in one cycle
};

struct GroupPlan {
  PlanStatus status = PlanStatus::Ok;
  DataSplit split;
  Pipeline pipeline;
  SpmPlan spm;
  uint64_t estimatedCycles = 0;
};

// The stages, in the order group-cost runs them for each candidate (each in its own file).
PlanStatus dataSplit(GroupOp group, llvm::ArrayRef<int32_t> sharding, const sim::ChipConfig& chip, DataSplit& split);
Pipeline buildPipeline(GroupOp group, const DataSplit& split);
PlanStatus allocateSpm(GroupOp group, const DataSplit& split, const Pipeline& pipeline, const sim::ChipConfig& chip,
                       SpmPlan& spm);
uint64_t estimateCycles(GroupOp group, const GroupPlan& plan, const sim::ChipConfig& chip);
// A group working in DDR (group_tag 2) has no plan: the cycles of its moves' program.
uint64_t estimateMoveCycles(GroupOp group, const sim::ChipConfig& chip);

// The plan as the group's and its ops' attributes (above), and back.
void writePlan(GroupOp group, const GroupPlan& plan);
mlir::FailureOr<GroupPlan> readPlan(GroupOp group);

}  // namespace tg::compiler::tx8be
