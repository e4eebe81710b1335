// SA_BufferLife and SA_BufferMerge (BufferLife.h): define/use timelines of a group's SPM buffers
// over the cycles of its software pipeline.
#include "BufferLife.h"

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <vector>

#include <llvm/ADT/DenseMap.h>

#include "Codegen.h"
#include "PanelMatmul.h"
#include "SwPipeline.h"
#include "WindowBytes.h"
#include "tilegraph/compiler/Dialect/Tx8be/IR/OpCost.h"
#include "tilegraph/core/error.h"
#include "tilegraph/sim/chip_config.h"

namespace tg::compiler::tx8be {

namespace {

uint64_t alignUp(uint64_t bytes, uint64_t align) { return (bytes + align - 1) / align * align; }

// (step, cycle) of each issue of each op, in cycle order.
using Occurrences = llvm::DenseMap<mlir::Operation*, std::vector<std::pair<int64_t, int64_t>>>;

Occurrences occurrencesOf(const Pipeline& pipeline) {
  Occurrences occurrences;
  for (size_t cycle = 0; cycle < pipeline.cycles.size(); ++cycle) {
    for (const PipelineItem& item : pipeline.cycles[cycle]) occurrences[item.op].push_back({item.step, int64_t(cycle)});
  }
  return occurrences;
}

// A move from DDR to DDR (reshape, view... of a group input): its result never enters SPM.
bool movesInDdr(mlir::Operation* op) {
  auto lib = mlir::dyn_cast<OpLibInterface>(op);
  if (!lib) return false;
  const OpAttr attr = lib.queryOpAttr();
  if (attr.needLoad != 0 || attr.needStore != 0) return false;
  return llvm::all_of(op->getOperands(), [](mlir::Value operand) { return operand.isa<mlir::BlockArgument>(); });
}

bool inSpm(mlir::Value value) {
  mlir::Operation* producer = value.getDefiningOp();
  return producer && isPipelined(producer) && !mlir::isa<StoreVarOp>(producer) && !movesInDdr(producer);
}

// The value whose buffer `value` is written into: an in-place op's result shares its operand 0's
// buffer when that operand has no other reader and is issued as often (a weight read by every
// step must not be overwritten by one of them).
mlir::Value inplaceRoot(mlir::Value value, const Occurrences& occurrences) {
  while (true) {
    mlir::Operation* producer = value.getDefiningOp();
    auto lib = mlir::dyn_cast_or_null<OpLibInterface>(producer);
    if (!lib || producer->getNumOperands() == 0 || !lib.queryOpAttr().memInplace) return value;
    mlir::Value operand = producer->getOperand(0);
    if (!inSpm(operand) || !operand.hasOneUse()) return value;
    const auto issues = [&](mlir::Operation* op) {
      auto it = occurrences.find(op);
      return it == occurrences.end() ? size_t(0) : it->second.size();
    };
    if (issues(operand.getDefiningOp()) != issues(producer)) return value;
    value = operand;
  }
}

// The most steps whose intervals meet in one cycle.
int32_t maxConcurrent(const std::map<int64_t, LiveInterval>& perStep) {
  std::vector<std::pair<int64_t, int>> events;
  for (const auto& [step, interval] : perStep) {
    events.push_back({interval.first, +1});
    events.push_back({interval.last + 1, -1});
  }
  std::sort(events.begin(), events.end());  // at one cycle, ends (-1) before starts
  int32_t live = 0, most = 0;
  for (const auto& [cycle, delta] : events) {
    live += delta;
    most = std::max(most, live);
  }
  return std::max(most, 1);
}

void extend(std::map<int64_t, LiveInterval>& perStep, int64_t step, int64_t cycle) {
  auto [it, fresh] = perStep.try_emplace(step, LiveInterval{cycle, cycle});
  if (!fresh) {
    it->second.first = std::min(it->second.first, cycle);
    it->second.last = std::max(it->second.last, cycle);
  }
}

// `value`'s per-step slice in `split`, if the split names it.
std::optional<llvm::ArrayRef<int64_t>> sliceOf(mlir::Value value, const DataSplit& split) {
  auto type = value.getType().dyn_cast<mlir::RankedTensorType>();
  if (!type) return std::nullopt;
  for (const ValueSlicing& slicing : split.values) {
    if (slicing.value == value && int64_t(slicing.slice.size()) == type.getRank()) return slicing.slice;
  }
  return std::nullopt;
}

// The bytes of `value`'s per-step window on one tile: its slice in `split`, the whole tensor when
// the split does not name it.
uint64_t windowBytes(mlir::Value value, const DataSplit& split) {
  auto type = value.getType().dyn_cast<mlir::RankedTensorType>();
  if (!type) return 0;
  return window_bytes(type, sliceOf(value, split).value_or(type.getShape()));
}

// The scratch the generated program's call of `op` needs at its largest window (codegenImmBytes).
uint64_t generatedImmBytes(mlir::Operation& op, const DataSplit& split) {
  auto type = op.getResult(0).getType().dyn_cast<mlir::RankedTensorType>();
  if (!type || type.getRank() > 4 || !codegenSupports(&op, nullptr)) return 0;
  const llvm::ArrayRef<int64_t> slice = sliceOf(op.getResult(0), split).value_or(type.getShape());
  std::array<int64_t, 4> size{1, 1, 1, 1};
  std::copy(slice.begin(), slice.end(), size.end() - slice.size());
  return codegenImmBytes(&op, size);
}

// The scratch of `op` at its largest window: the op library's own figure for that slice (as the
// data split counted it); an op whose slice has no query takes its share of the whole op's.
// Scratch need not scale with the window: a convolution's holds its whole kernel and its input's
// halo.
uint64_t scratchBytes(mlir::Operation& op, const DataSplit& split) {
  auto lib = mlir::dyn_cast<OpLibInterface>(&op);
  if (!lib) return 0;
  if (op.getNumResults() == 1) {
    if (auto slice = sliceOf(op.getResult(0), split)) {
      try {
        return queryOpCost(&op, *slice, sim::ChipConfig{}).immBytes;
      } catch (const Error&) {  // a slice the library refuses: the share below
      }
    }
  }
  const uint64_t imm = lib.getImmSpSize();
  if (imm == 0 || op.getNumResults() != 1) return imm;
  const uint64_t window = windowBytes(op.getResult(0), split);
  const uint64_t whole = windowBytes(op.getResult(0), DataSplit{});
  return window && whole ? (imm * window + whole - 1) / whole : imm;
}

// A K split's buffers (PanelMatmul.h): the operand panels and the accumulator, each with its
// copies, live from the first cycle to the last (the program cycles through the copies).
std::vector<BufferLife> panelBufferLives(const PanelMatmul& m, const DataSplit& split, const Pipeline& pipeline) {
  const LiveInterval whole{0, std::max<int64_t>(0, int64_t(pipeline.cycles.size()) - 1)};
  std::vector<BufferLife> buffers;
  for (mlir::Operation* op : {m.lhsLoad, m.rhsLoad, m.matmul}) {
    mlir::Value value = op->getResult(0);
    const int32_t copies = op == m.matmul ? accumulatorCopies(m, split) : panelOperandCopies(split);
    buffers.push_back(BufferLife{.value = value,
                                 .members = {value},
                                 .bytes = alignUp(windowBytes(value, split), kSpmAlign),
                                 .copies = copies,
                                 .intervals = {whole}});
  }
  return buffers;
}

}  // namespace

std::vector<BufferLife> bufferLives(GroupOp group, const DataSplit& split, const Pipeline& pipeline) {
  if (split.kPanel > 0) {
    if (const std::optional<PanelMatmul> matmul = panelMatmul(group)) return panelBufferLives(*matmul, split, pipeline);
  }
  const Occurrences occurrences = occurrencesOf(pipeline);
  std::vector<BufferLife> buffers;
  llvm::DenseMap<mlir::Value, size_t> bufferOf;  // by root value
  std::vector<std::map<int64_t, LiveInterval>> perStep;

  for (mlir::Operation& op : group.getBodyBlock()) {
    auto issued = occurrences.find(&op);
    if (issued == occurrences.end()) continue;
    for (mlir::Value value : op.getResults()) {
      if (!inSpm(value)) continue;
      const mlir::Value root = inplaceRoot(value, occurrences);
      auto [it, fresh] = bufferOf.try_emplace(root, buffers.size());
      if (fresh) {
        buffers.push_back(BufferLife{.value = root});
        perStep.emplace_back();
      }
      BufferLife& buffer = buffers[it->second];
      buffer.members.push_back(value);
      buffer.bytes = std::max(buffer.bytes, alignUp(windowBytes(value, split), kSpmAlign));
      std::map<int64_t, LiveInterval>& lives = perStep[it->second];
      for (const auto& [step, cycle] : issued->second) extend(lives, step, cycle);
      // Each read keeps alive the copy of the nearest issue of the producer before it: the same
      // step's, or the one issue of a step-invariant producer.
      for (mlir::Operation* user : value.getUsers()) {
        auto reads = occurrences.find(user);
        if (reads == occurrences.end()) continue;
        for (const auto& [step, cycle] : reads->second) {
          std::optional<int64_t> sameStep, latest;
          for (const auto& [defStep, defCycle] : issued->second) {
            if (defCycle > cycle) break;
            latest = defStep;
            if (defStep == step) sameStep = defStep;
          }
          if (const std::optional<int64_t> producerStep = sameStep ? sameStep : latest) {
            extend(lives, *producerStep, cycle);
          }
        }
      }
    }
    // The op's scratch at its largest window; for the ops whose generated call does more than
    // the library op, at least what that call asks for there, which need not shrink with the
    // window (a matmul's rounding follows its activation rows, attention's per-head scores, rope's
    // tables).
    uint64_t bytes = scratchBytes(op, split);
    if (mlir::isa<MatMulOp, GatherOp, SetRowsOp, RopeOp, AttentionOp>(&op)) {
      bytes = std::max(bytes, generatedImmBytes(op, split));
    }
    if (bytes == 0) continue;
    BufferLife scratch{.scratchOf = &op, .bytes = alignUp(bytes, kSpmAlign)};
    std::map<int64_t, LiveInterval> lives;
    for (const auto& [step, cycle] : issued->second) extend(lives, step, cycle);
    buffers.push_back(std::move(scratch));
    perStep.push_back(std::move(lives));
  }

  for (size_t i = 0; i < buffers.size(); ++i) {
    buffers[i].copies = maxConcurrent(perStep[i]);
    std::vector<LiveInterval> intervals;
    for (const auto& [step, interval] : perStep[i]) intervals.push_back(interval);
    buffers[i].intervals = mergeLifetimes(std::move(intervals));
  }
  return buffers;
}

}  // namespace tg::compiler::tx8be
