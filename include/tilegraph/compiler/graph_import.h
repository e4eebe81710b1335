#pragma once
// Converts a core graph into a tx8be module: one function whose arguments are the graph's
// non-weight leaves (inputs, and state such as KV caches), whose body is one tx8be op per core
// node in graph order, and whose results are the graph's outputs followed by the new contents of
// every state argument the graph writes (SET_ROWS / CPY into it) that no output already returns,
// in argument order.
//
// Value semantics: a core view (VIEW, RESHAPE, PERMUTE, TRANSPOSE) becomes a view, reshape or
// transpose op yielding a new tensor; CONT adds nothing; a write into a cache becomes set_rows,
// whose result is the whole updated cache. Every value has four dimensions (the core ne[]
// reversed, outermost first).
//
// Weights (leaves flagged kFlagParam) become tx8be.constant ops. A float or i32 weight of at most
// ImportOptions::inline_limit_bytes is stored in the IR as dense elements; a larger or
// block-quantized one as #tx8be.external<key, bytes, fingerprint>, whose bytes the returned
// ConstantData borrows from the graph's weights (so the module of a multi-gigabyte model stays
// small; the weights must outlive the ConstantData).
#include <cstddef>
#include <string>
#include <vector>

#include <mlir/IR/BuiltinOps.h>
#include <mlir/IR/MLIRContext.h>
#include <mlir/IR/OwningOpRef.h>

#include "tilegraph/compiler/constant_data.h"
#include "tilegraph/core/graph.h"

namespace tg::compiler {

struct ImportOptions {
  size_t inline_limit_bytes = 16 * 1024;
  std::string function_name = "main";
};

struct ImportedGraph {
  mlir::OwningOpRef<mlir::ModuleOp> module;
  ConstantData constants;
  std::vector<const Tensor*> arguments;  // the function's arguments, in order
  std::vector<const Tensor*> results;    // outputs, then the state tensors written
};

// `context` must have the tx8be and func dialects loaded or registered (register_dialects).
// Throws tg::Error naming the node for what the dialect cannot express (an op without a
// counterpart, a view not aligned to elements, a weight without data).
ImportedGraph import_graph(mlir::MLIRContext& context, const Graph& graph, const ImportOptions& options = {});

}  // namespace tg::compiler
