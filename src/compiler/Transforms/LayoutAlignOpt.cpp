// layout-align-opt (Passes.td): the TX8 back end's rewrite patterns that erase channel_norm ops
// layout-align-to-npu inserted but does not need, applied by the greedy pattern driver.
#include <mlir/IR/PatternMatch.h>
#include <mlir/Pass/Pass.h>
#include <mlir/Transforms/GreedyPatternRewriteDriver.h>

#include "LayoutModes.h"
#include "tilegraph/compiler/Dialect/Tx8be/Transforms/Passes.h"

namespace tg::compiler::tx8be {

#define GEN_PASS_CLASSES
#include "tilegraph/compiler/Dialect/Tx8be/Transforms/Passes.h.inc"

namespace {

// A vector constant needs no conversion: it can be stored in the aligned form directly.
struct ConstChannelNormErase : public mlir::OpRewritePattern<ConstantOp> {
  using OpRewritePattern::OpRewritePattern;

  mlir::LogicalResult matchAndRewrite(ConstantOp op, mlir::PatternRewriter& rewriter) const override {
    if (!op->hasOneUse()) return mlir::failure();
    auto norm = mlir::dyn_cast<ChannelNormOp>(*op->getUsers().begin());
    if (!norm) return mlir::failure();
    auto type = op.getOutput().getType().cast<mlir::RankedTensorType>();
    if (llvm::count_if(type.getShape(), [](int64_t size) { return size != 1; }) > 1) return mlir::failure();
    rewriter.updateRootInPlace(op, [&] { set_mem_layout(op, mem_layout(norm)); });
    rewriter.replaceOp(norm, op.getOutput());
    return mlir::success();
  }
};

// A second conversion of the same value to the same layout reuses the first.
struct RedundantChannelNormErase : public mlir::OpRewritePattern<ChannelNormOp> {
  using OpRewritePattern::OpRewritePattern;

  mlir::LogicalResult matchAndRewrite(ChannelNormOp op, mlir::PatternRewriter& rewriter) const override {
    for (mlir::Operation* user : op.getInput().getUsers()) {
      auto other = mlir::dyn_cast<ChannelNormOp>(user);
      if (!other || other == op || other->getBlock() != op->getBlock() || !other->isBeforeInBlock(op)) continue;
      if (mem_layout(other) != mem_layout(op)) continue;
      rewriter.replaceOp(op, other.getOutput());
      return mlir::success();
    }
    return mlir::failure();
  }
};

struct LayoutAlignOptPass : public LayoutAlignOptBase<LayoutAlignOptPass> {
  void runOnOperation() override {
    mlir::RewritePatternSet patterns(&getContext());
    patterns.add<ConstChannelNormErase, RedundantChannelNormErase>(&getContext());
    if (mlir::failed(mlir::applyPatternsAndFoldGreedily(getOperation(), std::move(patterns)))) {
      getOperation().emitError("layout-align-opt: the rewrite patterns did not converge");
      signalPassFailure();
    }
  }
};

}  // namespace

std::unique_ptr<mlir::Pass> createLayoutAlignOptPass() { return std::make_unique<LayoutAlignOptPass>(); }

}  // namespace tg::compiler::tx8be
