#pragma once
// The blocks the layout and grouping passes rewrite: a function's body and the body of every
// tx8be.subgraph in it (one chip's share of the graph, compiled as a program of its own, whose
// ops are laid out and grouped as the function's are). Groups' bodies are not among them: their
// ops are grouped already.
#include <llvm/ADT/SmallVector.h>
#include <mlir/Dialect/Func/IR/FuncOps.h>

#include "tilegraph/compiler/Dialect/Tx8be/IR/Tx8be.h"

namespace tg::compiler::tx8be {

inline llvm::SmallVector<mlir::Block*> graph_blocks(mlir::func::FuncOp function) {
  llvm::SmallVector<mlir::Block*> blocks{&function.getBody().front()};
  function.walk([&](SubgraphOp subgraph) { blocks.push_back(&subgraph.getBodyBlock()); });
  return blocks;
}

}  // namespace tg::compiler::tx8be
