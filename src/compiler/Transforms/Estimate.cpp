// estimateCycles (GroupPlan.h) and the `estimate` pass: the cycles a group's plan takes on the
// chip, as the TX8 toolchain's EstimatePass prices a candidate. The model is the C-model's own
// schedule of the program codegen writes for the plan, run on tile 0 (whose range is the
// largest; the tiles run side by side and the group ends with the slowest):
//   - the tasks: every (op, step) of the pipeline, in the program's issue order (cycle by cycle;
//     in a cycle the stores last, the rest by step), each on its queue: loads on the RDMA,
//     stores on the WDMA, compute ops one after another (each waits for the previous: they share
//     scratch);
//   - the waits the program states (tile_program.h), over the SPM plan's buffer copies: a load
//     waits for whatever last touched the bytes it overwrites (the compute that read the copy
//     `copies` steps ago, its store), a compute op for whatever touched its operands, result and
//     scratch and (the op library's rule) for every transfer issued before it, a store for
//     whatever touched the buffer it reads;
//   - the costs: a transfer is the DMA engine's latency, then its DDR bytes (its window cut
//     into contiguous runs, each rounded up to whole bursts) moving while the transfers in flight
//     share the tile's part of the DDR bandwidth (the DDR's bytes per cycle / the tiles the group
//     uses, all tiles moving alike; max-min fair, each within its engine's bytes per cycle); a
//     compute op is the cycles of its window at that step on one tile from the C-model's op
//     library (queryOpCost, OpCost.h: the op run on the slice), or, for a window the query does
//     not take, the whole op's getOpClockCycle scaled by the window's share of the result;
//   - the estimate is when the last task ends. A step whose window is empty on tile 0 costs
//     nothing.
// So a load of step s + 1 overlaps the compute of step s and the store of step s - 1 exactly as
// far as the buffers' copies and the shared DDR let it, and the step-invariant operands (the
// weights) are loaded once, in the first cycles. What it leaves out, and the C-model has: NoC
// traffic, DDR shared with other groups, tiles whose steps differ in size (tile 0's stand for
// all), and the overlap of one op's own instructions on different engines.
// estimateMoveCycles prices a group working in DDR the same way: tile 0's share of its moves'
// boxes (ddr_move.h), each a load then a store through two staging halves.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/DenseSet.h>
#include <llvm/ADT/STLExtras.h>
#include <mlir/Pass/Pass.h>

#include "ChipOption.h"
#include "Codegen.h"
#include "DdrMoves.h"
#include "GroupTags.h"
#include "PanelMatmul.h"
#include "WindowBytes.h"
#include "tilegraph/compiler/Dialect/Tx8be/IR/OpCost.h"
#include "tilegraph/compiler/Dialect/Tx8be/Transforms/GroupPlan.h"
#include "tilegraph/compiler/Dialect/Tx8be/Transforms/Passes.h"
#include "tilegraph/compiler/Dialect/Tx8be/Transforms/SliceWindows.h"
#include "tilegraph/compiler/tile_program_panels.h"
#include "tilegraph/core/error.h"
#include "tilegraph/sim/chip_config.h"
#include "tilegraph/sim/ne.h"

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

// The DDR bytes a transfer of `window` of a row-major tensor of shape `whole` moves: its
// contiguous runs (the innermost dimensions it spans whole, and its extent in the next) each
// rounded up to bursts; `run_bytes` gives the bytes of a run's shape.
template <typename RunBytes>
uint64_t ddr_bytes(llvm::ArrayRef<int64_t> whole, llvm::ArrayRef<int64_t> window, uint64_t burst, RunBytes run_bytes) {
  std::vector<int64_t> run(window.size(), 1);
  for (size_t d = window.size(); d-- > 0;) {
    run[d] = window[d];
    if (window[d] != whole[d]) break;
  }
  const uint64_t runs = elements(window) / std::max<uint64_t>(1, elements(run));
  return runs * ceil_div(run_bytes(run), burst) * burst;
}

uint64_t ddr_bytes(mlir::RankedTensorType type, llvm::ArrayRef<int64_t> window, uint64_t burst) {
  return ddr_bytes(type.getShape(), window, burst,
                   [&](llvm::ArrayRef<int64_t> run) { return window_bytes(type, run); });
}

struct ItemCost {
  const sim::ChipConfig& chip;

  double ddrBytes(mlir::Value value, llvm::ArrayRef<int64_t> window) const {
    return double(ddr_bytes(value.getType().cast<mlir::RankedTensorType>(), window, chip.ddr.burst_bytes));
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

// The engine queues of one tile as the generated program uses them: RDMA loads, WDMA stores, the
// compute ops, which run one after another whatever their engines (each waits for the previous
// one: they share scratch), and the DTE's copies to other tiles (a K split's shared panels).
enum class Queue { Load, Store, Compute, Noc };
constexpr size_t kQueues = 4;

// One (op, step) of the pipeline on tile 0, as the program issues it.
struct Task {
  Queue queue = Queue::Compute;
  uint64_t latency = 0;       // a transfer's fixed cycles before its bytes move
  double work = 0;            // a transfer's DDR bytes; a compute op's cycles
  double cap = 0;             // a transfer's engine limit, bytes per cycle
  std::vector<size_t> after;  // the tasks issued before it that it waits for
  double end = -1;
};

// An SPM buffer copy by its bytes: what the program's waits are kept for.
struct Range {
  uint64_t lo = 0, hi = 0;
  bool operator<(const Range& o) const { return lo != o.lo ? lo < o.lo : hi < o.hi; }
  bool overlaps(const Range& o) const { return lo < o.hi && o.lo < hi; }
};

// Runs the tasks as the C-model schedules them: each queue in issue order, a task when its queue
// is free and what it waits for has ended; a transfer spends its latency, then moves its bytes
// while the DDR transfers in flight share the tile's part of the DDR bandwidth (max-min fair, each
// within its engine's limit); a NoC copy moves at its engine's rate. Returns when the last task
// ends.
double schedule(std::vector<Task>& tasks, double ddrShare) {
  std::vector<size_t> queue[kQueues];
  for (size_t i = 0; i < tasks.size(); ++i) queue[size_t(tasks[i].queue)].push_back(i);
  size_t next[kQueues] = {0, 0, 0, 0};
  struct Running {
    size_t task;
    double latencyLeft, workLeft;
  };
  std::optional<Running> running[kQueues];
  double now = 0;
  size_t done = 0;
  while (done < tasks.size()) {
    for (size_t q = 0; q < kQueues; ++q) {
      if (running[q] || next[q] == queue[q].size()) continue;
      const Task& task = tasks[queue[q][next[q]]];
      const bool ready = std::all_of(task.after.begin(), task.after.end(), [&](size_t t) { return tasks[t].end >= 0; });
      if (!ready) continue;
      running[q] = Running{queue[q][next[q]++], double(task.latency), task.work};
    }
    // The rates of the transfers moving bytes: max-min fair shares of ddrShare under their caps.
    double rate[kQueues] = {0, 0, 0, 0};
    if (running[size_t(Queue::Noc)]) rate[size_t(Queue::Noc)] = tasks[running[size_t(Queue::Noc)]->task].cap;
    std::vector<size_t> moving;
    for (size_t q : {size_t(Queue::Load), size_t(Queue::Store)}) {
      if (running[q] && running[q]->latencyLeft <= 0) moving.push_back(q);
    }
    std::sort(moving.begin(), moving.end(),
              [&](size_t a, size_t b) { return tasks[running[a]->task].cap < tasks[running[b]->task].cap; });
    double left = ddrShare;
    for (size_t i = 0; i < moving.size(); ++i) {
      rate[moving[i]] = std::min(tasks[running[moving[i]]->task].cap, left / double(moving.size() - i));
      left -= rate[moving[i]];
    }
    double step = std::numeric_limits<double>::infinity();
    for (size_t q = 0; q < kQueues; ++q) {
      if (!running[q]) continue;
      const Running& r = *running[q];
      if (r.latencyLeft > 0) {
        step = std::min(step, r.latencyLeft);
      } else if (q == size_t(Queue::Compute)) {
        step = std::min(step, r.workLeft);
      } else if (rate[q] > 0) {
        step = std::min(step, r.workLeft / rate[q]);
      }
    }
    if (!std::isfinite(step)) break;  // nothing runs and nothing can start: not a schedule
    now += step;
    for (size_t q = 0; q < kQueues; ++q) {
      if (!running[q]) continue;
      Running& r = *running[q];
      if (r.latencyLeft > 0) {
        r.latencyLeft -= step;
      } else {
        r.workLeft -= q == size_t(Queue::Compute) ? step : step * rate[q];
      }
      if (r.latencyLeft <= 1e-9 && r.workLeft <= 1e-6 * std::max(1.0, tasks[r.task].work)) {
        tasks[r.task].end = now;
        running[q].reset();
        ++done;
      }
    }
  }
  return now;
}

// A K split (PanelMatmul.h) as its program runs it on tile 0 (part 0), its partners alike: per
// step, the loads of its panels (with sharing, of its part of each shared panel: the outermost
// dimension cut into as many parts as tiles share it), the DTE copies of those parts to the
// partners, the GEMMs of the panel (each waiting for its loads, and the partners' copies, which
// take as long as tile 0's own) and, after a window's last panel, the store of its f32
// accumulator. A load waits for the GEMM and the copies that read its buffer copy, a copy for the
// loads of its part and for that GEMM (the partner's, as long as tile 0's), a window's first GEMM for the
// store of the window that used its accumulator copy before. What it leaves out: NoC links shared
// by several copies (a link carries at most a row's parts per step, well under the NE's time).
uint64_t estimatePanelCycles(GroupOp group, const PanelMatmul& m, const GroupPlan& plan, const sim::ChipConfig& chip) {
  const DataSplit& split = plan.split;
  int64_t parts = 1;
  for (int32_t p : split.sharding) parts *= p;
  const double ddrShare = chip.ddr.bytes_per_cycle / double(parts);
  const int64_t panels = panelsOf(m, split.kPanel), windows = split.steps / panels;
  const int32_t operandCopies = panelOperandCopies(split), accCopies = accumulatorCopies(m, split);
  int32_t width = chip.mesh_x;
  if (auto region = group.getDevRegionAttr()) width = region.getWidth();
  auto hops = [&](int64_t a, int64_t b) { return std::abs(a % width - b % width) + std::abs(a / width - b / width); };
  const sim::Format format = *formatOf(m.matmul->getOperand(0).getType());  // a float type: panelMatmul
  // Every part's windows of the first panel, per result window.
  std::vector<std::vector<llvm::DenseMap<mlir::Value, WindowParam>>> first(static_cast<size_t>(parts));
  for (int64_t p = 0; p < parts; ++p) {
    for (int64_t w = 0; w < windows; ++w) first[size_t(p)].push_back(panelWindows(group, m, split, p, w * panels));
  }
  std::vector<Task> tasks;
  std::vector<size_t> gemm, store;
  std::vector<std::vector<size_t>> sends;  // per step, tile 0's copies to its partners
  for (int64_t s = 0; s < split.steps; ++s) {
    const int64_t w = s / panels, panel = s % panels;
    const llvm::DenseMap<mlir::Value, WindowParam> windowsNow = panelWindows(group, m, split, 0, s);
    if (windowsNow.empty()) break;  // tile 0's windows come first: nothing is left
    std::vector<size_t> inputs;
    sends.emplace_back();
    for (mlir::Operation* load : {m.lhsLoad, m.rhsLoad}) {
      mlir::Value value = load->getResult(0);
      WindowParam mine = windowsNow.find(value)->second;
      std::vector<int64_t> partners;
      if (split.shareOperands) {
        const WindowParam& at0 = first[0][size_t(w)].find(value)->second;
        for (int64_t p = 1; p < parts; ++p) {
          auto found = first[size_t(p)][size_t(w)].find(value);
          if (found != first[size_t(p)][size_t(w)].end() && found->second.start == at0.start &&
              found->second.size == at0.size) {
            partners.push_back(p);
          }
        }
      }
      if (!partners.empty()) {
        // Tile 0 loads the first part, as panel_matmul cuts it (shared_part); values are 4-D at most.
        const size_t rank = mine.size.size();
        tile_program::Window whole{{0, 0, 0, 0}, {1, 1, 1, 1}};
        for (size_t d = 0; d < rank; ++d) whole.size[4 - rank + d] = mine.size[d];
        const tile_program::Window part = tile_program::shared_part(whole, 0, int64_t(partners.size() + 1));
        for (size_t d = 0; d < rank; ++d) mine.size[d] = part.size[4 - rank + d];
      }
      Task loadTask;
      loadTask.queue = Queue::Load;
      loadTask.latency = uint64_t(chip.rdma.latency_cycles);
      loadTask.work =
          double(ddr_bytes(value.getType().cast<mlir::RankedTensorType>(), mine.size, chip.ddr.burst_bytes));
      loadTask.cap = chip.rdma.bytes_per_cycle;
      if (s >= operandCopies) {
        loadTask.after.push_back(gemm[size_t(s - operandCopies)]);
        for (size_t send : sends[size_t(s - operandCopies)]) loadTask.after.push_back(send);
      }
      const size_t loaded = tasks.size();
      tasks.push_back(loadTask);
      inputs.push_back(loaded);
      const double bytes = double(window_bytes(value.getType().cast<mlir::RankedTensorType>(), mine.size));
      for (int64_t partner : partners) {
        Task copy;
        copy.queue = Queue::Noc;
        copy.latency = uint64_t(chip.dte.latency_cycles + hops(0, partner) * chip.noc.hop_latency_cycles);
        copy.work = bytes;
        copy.cap = chip.dte.bytes_per_cycle;
        copy.after.push_back(loaded);
        if (s >= operandCopies) copy.after.push_back(gemm[size_t(s - operandCopies)]);
        inputs.push_back(tasks.size());
        sends.back().push_back(tasks.size());
        tasks.push_back(copy);
      }
    }
    const WindowParam& out = windowsNow.find(m.matmul->getResult(0))->second;
    const size_t r = out.size.size();
    int64_t batches = 1;
    for (size_t d = 0; d + 2 < r; ++d) batches *= out.size[d];
    Task compute;
    compute.queue = Queue::Compute;
    compute.work =
        double(batches) * double(sim::ne::gemm_cycles(chip, format, out.size[r - 2], out.size[r - 1],
                                                      windowsNow.find(m.rhsLoad->getResult(0))->second.size.back()));
    compute.after = inputs;
    if (panel == 0 && w >= accCopies) compute.after.push_back(store[size_t(w - accCopies)]);
    gemm.push_back(tasks.size());
    tasks.push_back(compute);
    if (panel == panels - 1 || s + 1 == split.steps) {
      Task storeTask;
      storeTask.queue = Queue::Store;
      storeTask.latency = uint64_t(chip.wdma.latency_cycles);
      storeTask.work = double(
          ddr_bytes(m.store->getResult(0).getType().cast<mlir::RankedTensorType>(), out.size, chip.ddr.burst_bytes));
      storeTask.cap = chip.wdma.bytes_per_cycle;
      storeTask.after.push_back(gemm.back());
      store.push_back(tasks.size());
      tasks.push_back(storeTask);
    }
  }
  return uint64_t(std::ceil(schedule(tasks, ddrShare)));
}

}  // namespace

uint64_t estimateCycles(GroupOp group, const GroupPlan& plan, const sim::ChipConfig& chip) {
  if (plan.split.kPanel > 0) {
    if (const std::optional<PanelMatmul> matmul = panelMatmul(group)) {
      return estimatePanelCycles(group, *matmul, plan, chip);
    }
  }
  const DataSplit& split = plan.split;
  const llvm::ArrayRef<int64_t> shape = primaryValue(group).getType().cast<mlir::ShapedType>().getShape();
  int64_t tiles = 1;
  for (int32_t parts : split.sharding) tiles *= parts;
  const double ddrShare = chip.ddr.bytes_per_cycle / double(tiles);
  const ItemCost cost{chip};

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

  // Where each value's and each op's scratch copies sit (the SPM plan: the program's waits follow
  // its buffers); a plan not placed yet is placed here.
  SpmPlan placed = plan.spm;
  if (placed.buffers.empty()) allocateSpm(group, split, plan.pipeline, chip, placed);
  llvm::DenseMap<mlir::Value, const SpmBuffer*> bufferOf;
  llvm::DenseMap<mlir::Operation*, const SpmBuffer*> scratchOf;
  for (const SpmBuffer& buffer : placed.buffers) {
    if (buffer.value) bufferOf[buffer.value] = &buffer;
    if (!buffer.value && buffer.scratchOf) scratchOf[buffer.scratchOf] = &buffer;
  }
  llvm::DenseSet<mlir::Value> invariant;
  for (const ValueSlicing& v : split.values) {
    if (v.stepInvariant) invariant.insert(v.value);
  }
  auto copy_of = [&](mlir::Value value, int64_t step) -> std::optional<Range> {
    const SpmBuffer* buffer = bufferOf.lookup(value);
    if (!buffer) return std::nullopt;
    const uint64_t copy = invariant.contains(value) ? 0 : uint64_t(step % std::max(buffer->copies, 1));
    const uint64_t lo = buffer->offset + copy * buffer->bytes;
    return Range{lo, lo + buffer->bytes};
  };

  // The tasks in the program's issue order (Codegen.cpp): cycle by cycle, in a cycle stores last
  // and the rest by step; with the waits of tile_program.h: a load waits for whatever touched the
  // bytes it overwrites, a compute op for whatever touched its operands, result and scratch, for
  // the previous compute op and (the op library's rule) for every transfer issued before it, a
  // store for whatever touched the buffer it reads.
  std::vector<Task> tasks;
  std::map<Range, std::vector<size_t>> touched;  // per buffer copy, the last task of each queue that touched it
  std::optional<size_t> lastOf[kQueues];
  auto waits_for_overlapping = [&](const Range& range, std::vector<size_t>& after) {
    for (const auto& [other, last] : touched) {
      if (other.overlaps(range)) after.insert(after.end(), last.begin(), last.end());
    }
  };
  auto waits_for = [&](const Range& range, std::vector<size_t>& after) {
    auto it = touched.find(range);
    if (it != touched.end()) after.insert(after.end(), it->second.begin(), it->second.end());
  };
  auto touch = [&](const Range& range, size_t task) {
    std::vector<size_t>& last = touched[range];
    const Queue queue = tasks[task].queue;
    llvm::erase_if(last, [&](size_t t) { return tasks[t].queue == queue; });
    last.push_back(task);
  };
  for (const std::vector<PipelineItem>& cycle : plan.pipeline.cycles) {
    std::vector<PipelineItem> items = cycle;
    std::stable_sort(items.begin(), items.end(), [](const PipelineItem& a, const PipelineItem& b) {
      return std::pair{a.engine == PipelineEngine::Store, a.step} <
             std::pair{b.engine == PipelineEngine::Store, b.step};
    });
    for (const PipelineItem& item : items) {
      if (item.op->getNumResults() != 1) continue;
      mlir::Value result = item.op->getResult(0);
      const std::vector<int64_t> window = window_of(result, item.step);
      if (window.empty() || elements(window) == 0) continue;
      Task task;
      std::vector<Range> reads, writes;
      switch (item.engine) {
        case PipelineEngine::Load: {
          task.queue = Queue::Load;
          task.latency = uint64_t(chip.rdma.latency_cycles);
          task.work = cost.ddrBytes(result, window);
          task.cap = chip.rdma.bytes_per_cycle;
          if (auto range = copy_of(result, item.step)) {
            waits_for_overlapping(*range, task.after);
            writes.push_back(*range);
          }
          break;
        }
        case PipelineEngine::Store: {
          task.queue = Queue::Store;
          task.latency = uint64_t(chip.wdma.latency_cycles);
          task.work = cost.ddrBytes(result, window);
          task.cap = chip.wdma.bytes_per_cycle;
          if (auto range = copy_of(item.op->getOperand(0), item.step)) {
            waits_for(*range, task.after);
            writes.push_back(*range);
          }
          break;
        }
        default: {
          task.queue = Queue::Compute;
          task.work = double(cost.compute(item.op, window));
          for (mlir::Value operand : item.op->getOperands()) {
            if (auto range = copy_of(operand, item.step)) writes.push_back(*range);
          }
          if (auto range = copy_of(result, item.step)) writes.push_back(*range);
          if (const SpmBuffer* scratch = scratchOf.lookup(item.op)) {
            writes.push_back(Range{scratch->offset, scratch->offset + scratch->bytes});
          }
          for (const Range& range : writes) waits_for(range, task.after);
          for (std::optional<size_t> last : lastOf) {
            if (last) task.after.push_back(*last);
          }
          break;
        }
      }
      const size_t index = tasks.size();
      lastOf[size_t(task.queue)] = index;
      tasks.push_back(std::move(task));
      for (const Range& range : writes) touch(range, index);
    }
  }
  return uint64_t(std::ceil(schedule(tasks, ddrShare)));
}

// A group working in DDR: its moves' boxes dealt to the tiles in turn, as the move program deals
// them (tile_program.h, MoveQueue), priced on tile 0 (which gets the first box, so at least as
// many as any other): each box a load, then a store, through one of two staging halves (a load
// waits for the store of the box two before it), the DDR shared by the tiles that have boxes.
uint64_t estimateMoveCycles(GroupOp group, const sim::ChipConfig& chip) {
  mlir::FailureOr<std::vector<DdrMove>> moves = ddrMoves(group);
  if (mlir::failed(moves)) return 0;
  const int tiles = chip.tile_count();
  const uint64_t half = move_staging_bytes(chip.spm_bytes) / 2, burst = chip.ddr.burst_bytes;
  // A side of a box in DDR: a window of its byte extents.
  auto ddrBytes = [&](const MoveDims& size, const MoveDims& whole) {
    return double(ddr_bytes(whole, size, burst, [](llvm::ArrayRef<int64_t> run) { return elements(run); }));
  };
  std::vector<Task> tasks;
  int64_t dealt = 0;
  for (const DdrMove& move : *moves) {
    for (const MoveBox& box : move_boxes(move.size, move.srcStrides, move.dstStrides, move.elementBytes, half)) {
      if (dealt++ % tiles != 0) continue;
      Task load{Queue::Load, uint64_t(chip.rdma.latency_cycles), ddrBytes(box.size, box.src_whole),
                chip.rdma.bytes_per_cycle};
      if (tasks.size() >= 4) load.after.push_back(tasks.size() - 3);  // the store two boxes back
      tasks.push_back(load);
      Task store{Queue::Store, uint64_t(chip.wdma.latency_cycles), ddrBytes(box.size, box.dst_whole),
                 chip.wdma.bytes_per_cycle};
      store.after.push_back(tasks.size() - 1);
      tasks.push_back(store);
    }
  }
  const double busyTiles = double(std::clamp<int64_t>(dealt, 1, tiles));
  return uint64_t(std::ceil(schedule(tasks, chip.ddr.bytes_per_cycle / busyTiles)));
}

namespace {

struct EstimatePass : public EstimateBase<EstimatePass> {
  void runOnOperation() override {
    mlir::FailureOr<sim::ChipConfig> chip = chipOption(getOperation(), "estimate", chipConfig);
    if (mlir::failed(chip)) return signalPassFailure();
    getOperation().walk([&](GroupOp group) {
      auto set = [&](uint64_t cycles) {
        group.setEstimatedCyclesAttr(
            mlir::IntegerAttr::get(mlir::IntegerType::get(&getContext(), 64), int64_t(cycles)));
      };
      if (group.getGroupTag().value_or(0) == kGroupTagInDdr) return set(estimateMoveCycles(group, *chip));
      mlir::FailureOr<GroupPlan> plan = readPlan(group);
      if (mlir::failed(plan)) return signalPassFailure();
      if (plan->pipeline.cycles.empty()) {
        group.emitOpError() << "has no pipeline to estimate (run sw-pipeline first)";
        return signalPassFailure();
      }
      set(estimateCycles(group, *plan, *chip));
    });
  }
};

}  // namespace

std::unique_ptr<mlir::Pass> createEstimatePass() { return std::make_unique<EstimatePass>(); }

}  // namespace tg::compiler::tx8be
