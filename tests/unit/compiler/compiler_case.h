#pragma once
// A core graph as the compiler's tests use it: imported into tx8be, with its inputs and the core
// reference's results, so that a test interprets the module (before and after a pass) and
// compares with expect_close.
#include <string>
#include <vector>

#include <mlir/IR/BuiltinOps.h>
#include <mlir/IR/MLIRContext.h>

#include "tilegraph/compiler/graph_import.h"
#include "tilegraph/compiler/host_tensor.h"
#include "tilegraph/core/graph.h"

namespace tg::test {

// An MLIRContext with the tx8be and func dialects (and the passes registered).
struct CompilerContext {
  mlir::MLIRContext context;
  CompilerContext();
};

struct CompilerCase {
  compiler::ImportedGraph imported;
  std::vector<compiler::HostTensor> inputs;     // one per function argument
  std::vector<compiler::HostTensor> reference;  // one per function result
};

// Imports the graph of `outputs` (built in an allocating context, inputs and weights filled),
// takes its inputs, then computes it with the core reference (which writes state such as KV
// caches in place, after the inputs were taken). The weights must outlive the case.
CompilerCase make_compiler_case(mlir::MLIRContext& context, const std::vector<Tensor*>& outputs,
                                const compiler::ImportOptions& options = {});

// Runs a textual pass pipeline (as --pass-pipeline takes it, e.g. "func.func(tx8be-infer-shapes)")
// on `module` and verifies the result; returns the diagnostics, empty on success.
std::string run_pipeline(mlir::ModuleOp module, const std::string& pipeline);

// Every result within `max_nmse` (normalized squared error) of `want`; failures name the result.
void expect_close(const std::vector<compiler::HostTensor>& got, const std::vector<compiler::HostTensor>& want,
                  double max_nmse, const std::string& what = "");

}  // namespace tg::test
