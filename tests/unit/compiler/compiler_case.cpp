#include "compiler_case.h"

#include <gtest/gtest.h>

#include <mlir/IR/Diagnostics.h>
#include <mlir/IR/Verifier.h>
#include <mlir/Pass/PassManager.h>
#include <mlir/Pass/PassRegistry.h>

#include "common/tensor_utils.h"
#include "tilegraph/compiler/registration.h"
#include "tilegraph/core/reference.h"

namespace tg::test {

CompilerContext::CompilerContext() {
  mlir::DialectRegistry registry;
  compiler::register_dialects(registry);
  compiler::register_passes();
  context.appendDialectRegistry(registry);
  context.loadAllAvailableDialects();
}

CompilerCase make_compiler_case(mlir::MLIRContext& context, const std::vector<Tensor*>& outputs,
                                const compiler::ImportOptions& options) {
  const Graph graph = Graph::build(outputs);
  // Views made before their source had memory point into it now.
  for (Tensor* t : graph.nodes()) {
    if (t->view_src && !t->data) t->data = static_cast<char*>(t->view_src->data) + t->view_offs;
  }
  CompilerCase c;
  c.imported = compiler::import_graph(context, graph, options);
  for (const Tensor* t : c.imported.arguments) c.inputs.push_back(compiler::HostTensor::from_tensor(*t));
  reference::compute_graph(graph);
  for (const Tensor* t : c.imported.results) c.reference.push_back(compiler::HostTensor::from_tensor(*t));
  return c;
}

std::string run_pipeline(mlir::ModuleOp module, const std::string& pipeline) {
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler handler(module.getContext(), [&](mlir::Diagnostic& d) {
    diagnostics += d.str() + "\n";
    return mlir::success();
  });
  mlir::PassManager pm(module.getContext(), mlir::ModuleOp::getOperationName());
  std::string parse_errors;
  llvm::raw_string_ostream errors(parse_errors);
  if (mlir::failed(mlir::parsePassPipeline(pipeline, pm, errors))) return "bad pipeline: " + errors.str();
  if (mlir::failed(pm.run(module)) || mlir::failed(mlir::verify(module))) {
    return diagnostics.empty() ? "the pipeline failed" : diagnostics;
  }
  return "";
}

void expect_close(const std::vector<compiler::HostTensor>& got, const std::vector<compiler::HostTensor>& want,
                  double max_nmse, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].shape(), want[i].shape()) << what << " result " << i;
    const std::vector<float> out = got[i].to_f32();
    const std::vector<float> ref = want[i].to_f32();
    ASSERT_EQ(out.size(), ref.size()) << what << " result " << i;
    EXPECT_LE(nmse(out, ref), max_nmse) << what << " result " << i << ": " << describe_difference(out, ref);
  }
}

}  // namespace tg::test
