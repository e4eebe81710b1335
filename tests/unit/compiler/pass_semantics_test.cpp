// Passes keep a module's results: each random graph interpreted after the pass gives what it gave
// before (and what the core reference gives). The pattern each pass's semantic test follows.
#include <gtest/gtest.h>

#include "compiler_case.h"
#include "random_graph.h"
#include "tilegraph/compiler/interpreter.h"

namespace tg::compiler {
namespace {

void expect_pipeline_keeps_results(const std::string& pipeline) {
  for (uint32_t seed = 100; seed < 120; ++seed) {
    test::CompilerContext c;
    Context ctx;
    test::CompilerCase cc = test::make_compiler_case(c.context, test::random_graph(ctx, seed));
    const std::vector<HostTensor> before = interpret(*cc.imported.module, cc.inputs, cc.imported.constants);
    test::expect_close(before, cc.reference, 0.0, "before, seed " + std::to_string(seed));
    ASSERT_EQ(test::run_pipeline(*cc.imported.module, pipeline), "") << "seed " << seed;
    const std::vector<HostTensor> after = interpret(*cc.imported.module, cc.inputs, cc.imported.constants);
    test::expect_close(after, before, 0.0, pipeline + ", seed " + std::to_string(seed));
  }
}

TEST(CompilerPassSemantics, InferShapesKeepsResults) { expect_pipeline_keeps_results("func.func(tx8be-infer-shapes)"); }

TEST(CompilerPassSemantics, ABadPipelineIsReported) {
  test::CompilerContext c;
  Context ctx;
  test::CompilerCase cc = test::make_compiler_case(c.context, test::random_graph(ctx, 1));
  EXPECT_NE(test::run_pipeline(*cc.imported.module, "func.func(no-such-pass)").find("bad pipeline"), std::string::npos);
}

}  // namespace
}  // namespace tg::compiler
