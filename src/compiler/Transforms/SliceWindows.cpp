#include "tilegraph/compiler/Dialect/Tx8be/Transforms/SliceWindows.h"

#include <algorithm>

namespace tg::compiler::tx8be {

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The row-major (innermost fastest) multi-index of `linear` over `counts`.
std::vector<int64_t> unflatten(int64_t linear, llvm::ArrayRef<int64_t> counts) {
  std::vector<int64_t> index(counts.size(), 0);
  for (size_t d = counts.size(); d-- > 0;) {
    index[d] = linear % counts[d];
    linear /= counts[d];
  }
  return index;
}

// Grows `into` to the bounding box of itself and `window`.
void bound(WindowParam& into, const WindowParam& window) {
  for (size_t d = 0; d < into.start.size() && d < window.start.size(); ++d) {
    const int64_t end = std::max(into.start[d] + into.size[d], window.start[d] + window.size[d]);
    into.start[d] = std::min(into.start[d], window.start[d]);
    into.size[d] = end - into.start[d];
  }
}

WindowParam whole(mlir::Value value) {
  WindowParam window;
  auto type = value.getType().cast<mlir::RankedTensorType>();
  window.start.assign(size_t(type.getRank()), 0);
  window.size.assign(type.getShape().begin(), type.getShape().end());
  return window;
}

}  // namespace

WindowParam tileRange(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int32_t> sharding, int64_t tile) {
  std::vector<int64_t> parts(sharding.begin(), sharding.end());
  const std::vector<int64_t> index = unflatten(tile, parts);
  WindowParam range;
  for (size_t d = 0; d < shape.size(); ++d) {
    const int64_t part = ceil_div(shape[d], parts[d]);
    const int64_t start = std::min(shape[d], index[d] * part);
    range.start.push_back(start);
    range.size.push_back(std::min(shape[d], start + part) - start);
  }
  return range;
}

std::vector<int64_t> stepsPerDim(llvm::ArrayRef<int64_t> extent, llvm::ArrayRef<int64_t> slice) {
  std::vector<int64_t> steps;
  for (size_t d = 0; d < extent.size(); ++d) steps.push_back(std::max<int64_t>(1, ceil_div(extent[d], slice[d])));
  return steps;
}

WindowParam primaryWindow(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int32_t> sharding,
                          llvm::ArrayRef<int64_t> slice, int64_t tile, int64_t step) {
  // Every tile walks tile 0's (the largest) range in steps.
  const WindowParam first = tileRange(shape, sharding, 0);
  const WindowParam range = tileRange(shape, sharding, tile);
  const std::vector<int64_t> index = unflatten(step, stepsPerDim(first.size, slice));
  WindowParam window;
  for (size_t d = 0; d < shape.size(); ++d) {
    const int64_t offset = std::min(range.size[d], index[d] * slice[d]);
    window.start.push_back(range.start[d] + offset);
    window.size.push_back(std::min(range.size[d], offset + slice[d]) - offset);
  }
  return window;
}

bool isEmpty(const WindowParam& window) {
  return std::any_of(window.size.begin(), window.size.end(), [](int64_t s) { return s <= 0; });
}

mlir::Value primaryValue(GroupOp group) { return group.getYield()->getOperand(0); }

mlir::FailureOr<llvm::DenseMap<mlir::Value, WindowParam>> bodyWindows(GroupOp group, const WindowParam& primary) {
  llvm::DenseMap<mlir::Value, WindowParam> windows;
  auto ask = [&](mlir::Value value, const WindowParam& window) {
    auto [it, inserted] = windows.try_emplace(value, window);
    if (!inserted) bound(it->second, window);
  };
  const mlir::Value primary_value = primaryValue(group);
  const auto primary_type = primary_value.getType();
  for (mlir::Value result : group.getYield()->getOperands()) {
    if (result == primary_value ||
        result.getType().cast<mlir::ShapedType>().getShape() == primary_type.cast<mlir::ShapedType>().getShape()) {
      ask(result, primary);
    } else {
      ask(result, whole(result));
    }
  }
  // Users come after their operands in the block: in reverse order every op's result window is
  // complete before it is asked for its operands'.
  for (mlir::Operation& op : llvm::reverse(group.getBodyBlock().without_terminator())) {
    if (op.getNumResults() != 1) continue;
    auto found = windows.find(op.getResult(0));
    if (found == windows.end()) continue;
    auto sharding = mlir::dyn_cast<ShardingInterface>(&op);
    if (!sharding) return op.emitOpError() << "has no sharding rules (ShardingInterface)";
    const WindowParam result = found->second;
    const std::vector<WindowParam> operands = sharding.backWindow(result);
    if (operands.size() != op.getNumOperands()) {
      return op.emitOpError() << "gives " << operands.size() << " operand windows for " << op.getNumOperands()
                              << " operands";
    }
    for (unsigned i = 0; i < op.getNumOperands(); ++i) {
      auto type = op.getOperand(i).getType().cast<mlir::RankedTensorType>();
      if (operands[i].start.size() != size_t(type.getRank()) || operands[i].size.size() != size_t(type.getRank())) {
        return op.emitOpError() << "gives no window of operand " << i;
      }
      ask(op.getOperand(i), operands[i]);
    }
  }
  return windows;
}

}  // namespace tg::compiler::tx8be
