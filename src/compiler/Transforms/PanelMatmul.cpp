// The K-split strategy of a lone matmul group (PanelMatmul.h): eligibility, windows, data split
// and pipeline.
#include "PanelMatmul.h"

#include <algorithm>

#include "BufferLife.h"
#include "SwPipeline.h"
#include "WindowBytes.h"
#include "tilegraph/compiler/Dialect/Tx8be/Transforms/SliceWindows.h"

namespace tg::compiler::tx8be {

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

mlir::RankedTensorType tensorType(mlir::Value value) { return value.getType().cast<mlir::RankedTensorType>(); }

bool isLoad(mlir::Operation* op) {
  if (mlir::isa_and_nonnull<LoadVarOp>(op)) return true;
  auto constant = mlir::dyn_cast_or_null<LoadConstOp>(op);
  return constant && !constant.getBypassCodegen().value_or(false);
}

uint64_t aligned(uint64_t bytes) { return (bytes + kSpmAlign - 1) / kSpmAlign * kSpmAlign; }

// The result windows a tile walks (the steps of a split without K panels).
int64_t windowsOf(const DataSplit& split, llvm::ArrayRef<int64_t> shape) {
  const WindowParam range = tileRange(shape, split.sharding, 0);
  int64_t windows = 1;
  for (int64_t n : stepsPerDim(range.size, split.slice)) windows *= n;
  return windows;
}

// The SPM bytes of a K split's buffers on one tile: the accumulator copies of the result window
// (the slice) and the panel copies of the operand windows it reads (rhs: its rows N and batches,
// lhs: its rows M and at most as many batches).
uint64_t panelSpmBytes(const PanelMatmul& m, const DataSplit& split) {
  auto out = tensorType(m.matmul->getResult(0)), lhs = tensorType(m.matmul->getOperand(0));
  const llvm::ArrayRef<int64_t> slice = split.slice;
  const size_t r = slice.size(), lr = size_t(lhs.getRank());
  std::vector<int64_t> rhsWindow(slice.begin(), slice.end()), lhsWindow(lr, 1);
  rhsWindow[r - 1] = split.kPanel;
  for (size_t d = 0; d + 2 < lr && d + 2 < r; ++d) lhsWindow[d] = std::min(lhs.getShape()[d], slice[d]);
  lhsWindow[lr - 2] = slice[r - 1];
  lhsWindow[lr - 1] = split.kPanel;
  return uint64_t(accumulatorCopies(m, split)) * aligned(window_bytes(out, slice)) +
         uint64_t(panelOperandCopies(split)) * (aligned(window_bytes(lhs, lhsWindow)) +
                                                aligned(window_bytes(tensorType(m.matmul->getOperand(1)), rhsWindow)));
}

}  // namespace

std::optional<PanelMatmul> panelMatmul(GroupOp group, std::string* why) {
  auto fail = [&](const char* reason) -> std::optional<PanelMatmul> {
    if (why) *why = reason;
    return std::nullopt;
  };
  PanelMatmul m;
  std::vector<mlir::Operation*> ops;
  for (mlir::Operation& op : group.getBodyBlock().without_terminator()) ops.push_back(&op);
  for (mlir::Operation* op : ops) {
    if (auto matmul = mlir::dyn_cast<MatMulOp>(op)) {
      if (m.matmul) return fail("more than one matmul");
      m.matmul = matmul;
    }
  }
  if (!m.matmul || ops.size() != 4) return fail("the group is not loads -> one matmul -> store");
  m.lhsLoad = m.matmul->getOperand(0).getDefiningOp();
  m.rhsLoad = m.matmul->getOperand(1).getDefiningOp();
  if (!isLoad(m.lhsLoad) || !isLoad(m.rhsLoad) || m.lhsLoad == m.rhsLoad) {
    return fail("a matmul operand is not loaded by a load of its own");
  }
  mlir::Value result = m.matmul->getResult(0);
  if (!result.hasOneUse() || !mlir::isa<StoreVarOp>(*result.getUsers().begin())) {
    return fail("the matmul's result is not stored");
  }
  m.store = mlir::cast<StoreVarOp>(*result.getUsers().begin());
  if (group.getYield()->getNumOperands() != 1 || group.getYield()->getOperand(0) != m.store->getResult(0)) {
    return fail("the group yields more than the stored result");
  }
  auto lhs = tensorType(m.matmul->getOperand(0)), rhs = tensorType(m.matmul->getOperand(1));
  if (lhs.getRank() > 4 || rhs.getRank() > 4) return fail("more than four dimensions");
  mlir::Type element = lhs.getElementType();
  if (element != rhs.getElementType() || !(element.isF32() || element.isF16() || element.isBF16())) {
    return fail("operands of different types or not f32 / f16 / bf16 (the NE accumulates one float type)");
  }
  m.k = lhs.getShape().back();
  if (m.k < 1) return fail("K is empty");
  return m;
}

int64_t panelsOf(const PanelMatmul& m, int64_t kPanel) { return ceil_div(m.k, std::max<int64_t>(kPanel, 1)); }

int32_t panelOperandCopies(const DataSplit& split) { return int32_t(std::min<int64_t>(3, split.steps)); }

int32_t accumulatorCopies(const PanelMatmul& m, const DataSplit& split) {
  const int64_t windows = windowsOf(split, tensorType(m.matmul->getResult(0)).getShape());
  return int32_t(std::min<int64_t>(2, windows));
}

llvm::DenseMap<mlir::Value, WindowParam> panelWindows(GroupOp group, const PanelMatmul& m, const DataSplit& split,
                                                      int64_t tile, int64_t step) {
  const int64_t panels = panelsOf(m, split.kPanel);
  const WindowParam primary =
      primaryWindow(tensorType(primaryValue(group)).getShape(), split.sharding, split.slice, tile, step / panels);
  if (isEmpty(primary)) return llvm::DenseMap<mlir::Value, WindowParam>();
  mlir::FailureOr<llvm::DenseMap<mlir::Value, WindowParam>> windows = bodyWindows(group, primary);
  if (mlir::failed(windows)) return llvm::DenseMap<mlir::Value, WindowParam>();
  const int64_t k0 = (step % panels) * split.kPanel, k = std::min(split.kPanel, m.k - k0);
  auto panel = [&](mlir::Value value) {
    auto found = windows->find(value);
    if (found == windows->end()) return;
    found->second.start.back() = k0;
    found->second.size.back() = k;
  };
  for (mlir::Operation* load : {m.lhsLoad, m.rhsLoad}) {
    panel(load->getResult(0));
    for (mlir::Value input : load->getOperands()) panel(input);
  }
  return std::move(*windows);
}

PlanStatus panelSplit(GroupOp group, llvm::ArrayRef<int32_t> sharding, int64_t kPanel, bool shareOperands,
                      const sim::ChipConfig& chip, DataSplit& split) {
  split = DataSplit{};
  const std::optional<PanelMatmul> m = panelMatmul(group);
  if (!m || kPanel < 1) return PlanStatus::NotSplittable;
  const llvm::ArrayRef<int64_t> shape = tensorType(primaryValue(group)).getShape();
  int32_t tiles = chip.tile_count();
  if (auto region = group.getDevRegionAttr()) tiles = region.getWidth() * region.getHeight();
  int64_t parts = 1;
  for (int32_t p : sharding) parts *= p;
  if (sharding.size() != shape.size() || parts > tiles) return PlanStatus::NotSplittable;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (sharding[d] < 1 || sharding[d] > shape[d] || ceil_div(shape[d], sharding[d]) * (sharding[d] - 1) >= shape[d]) {
      return PlanStatus::NotSplittable;
    }
  }
  split.sharding.assign(sharding.begin(), sharding.end());
  split.kPanel = std::min(kPanel, m->k);
  split.shareOperands = shareOperands && parts > 1;
  const int64_t panels = panelsOf(*m, split.kPanel);
  const WindowParam range = tileRange(shape, sharding, 0);
  std::vector<int64_t> slice = range.size;
  const size_t rank = shape.size();
  for (;;) {
    split.slice = slice;
    split.steps = windowsOf(split, shape) * panels;
    if (panelSpmBytes(*m, split) <= chip.spm_bytes) break;
    // Batches first, then the larger of rows and columns: a squarer window reads fewer operand
    // rows per result element.
    size_t d = 0;
    while (d + 2 < rank && slice[d] == 1) ++d;
    if (d + 2 >= rank) {
      d = rank >= 2 && slice[rank - 2] >= slice[rank - 1] ? rank - 2 : rank - 1;
      if (slice[d] == 1) d = rank - 1;
    }
    if (slice[d] == 1) return PlanStatus::SpmAllocFailed;
    slice[d] = ceil_div(slice[d], 2);
  }

  // Every value's slicing: its cut over tiles (the matmul's rule), its largest window (tile 0's
  // windows, the first panel: the largest), whether it changes from step to step.
  auto rules = mlir::cast<ShardingInterface>(m->matmul);
  ShardingSplitParam param{split.sharding, std::vector<int32_t>(rank, 1)};
  const std::vector<ShardingSplitParam> operandCuts = rules.tileShardingSplit(param);
  llvm::DenseMap<mlir::Value, std::vector<int64_t>> largest;
  for (int64_t step = 0; step < split.steps; step += panels) {
    for (auto& [value, window] : panelWindows(group, *m, split, 0, step)) {
      auto [big, fresh] = largest.try_emplace(value, window.size);
      if (fresh) continue;
      for (size_t d = 0; d < window.size.size(); ++d) big->second[d] = std::max(big->second[d], window.size[d]);
    }
  }
  for (mlir::Operation& op : group.getBodyBlock().without_terminator()) {
    mlir::Value value = op.getResult(0);
    ValueSlicing v;
    v.value = value;
    const size_t valueRank = size_t(tensorType(value).getRank());
    v.sharding.assign(valueRank, 1);
    if (&op == m->lhsLoad || &op == m->rhsLoad) {
      const size_t i = &op == m->lhsLoad ? 0 : 1;
      if (i < operandCuts.size() && operandCuts[i].outSharding.size() == valueRank) {
        v.sharding = operandCuts[i].outSharding;
      }
      v.stepInvariant = split.steps == 1;
    } else {
      v.sharding = split.sharding;
      v.stepInvariant = split.steps / panels == 1;
    }
    auto big = largest.find(value);
    v.slice = big != largest.end() ? big->second : std::vector<int64_t>(tensorType(value).getShape());
    split.values.push_back(std::move(v));
  }
  return PlanStatus::Ok;
}

Pipeline panelPipeline(const PanelMatmul& m, const DataSplit& split) {
  // Three stages: the loads of step s in cycle s, its GEMM in cycle s + 1, the store of a
  // window's accumulator in the cycle after its last GEMM.
  Pipeline pipeline;
  pipeline.cycles.resize(size_t(split.steps + 2));
  const int64_t panels = panelsOf(m, split.kPanel);
  for (int64_t s = 0; s < split.steps; ++s) {
    for (mlir::Operation* op : {m.lhsLoad, m.rhsLoad})
      pipeline.cycles[size_t(s)].push_back({op, s, pipelineEngine(op)});
    pipeline.cycles[size_t(s + 1)].push_back({m.matmul, s, pipelineEngine(m.matmul)});
    if (s % panels == panels - 1) pipeline.cycles[size_t(s + 2)].push_back({m.store, s, PipelineEngine::Store});
  }
  if (pipeline.cycles.back().empty()) pipeline.cycles.pop_back();
  return pipeline;
}

}  // namespace tg::compiler::tx8be
