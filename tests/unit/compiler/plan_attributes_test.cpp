// A group's plan as attributes (GroupPlan.h): writePlan then readPlan gives the plan back, also
// through the printed IR, and readPlan refuses a group without one.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include <llvm/Support/raw_ostream.h>
#include <mlir/IR/BuiltinOps.h>
#include <mlir/IR/MLIRContext.h>
#include <mlir/IR/Verifier.h>
#include <mlir/Parser/Parser.h>

#include "tilegraph/compiler/Dialect/Tx8be/Transforms/GroupPlan.h"
#include "tilegraph/compiler/registration.h"

namespace tg::compiler::tx8be {
namespace {

// A matmul -> add -> relu group as the front end leaves it: a loaded input, a weight, a store.
constexpr const char* kGroup = R"mlir(
func.func @g(%x: tensor<64x96xf32>, %w: tensor<32x96xf16>, %b: tensor<1x32xf32>) -> tensor<64x32xf32> {
  %0 = tx8be.group(%x, %w, %b) {group_tag = 0 : i32} : (tensor<64x96xf32>, tensor<32x96xf16>, tensor<1x32xf32>) -> tensor<64x32xf32> {
  ^bb0(%a: tensor<64x96xf32>, %k: tensor<32x96xf16>, %c: tensor<1x32xf32>):
    %l = tx8be.load_var %a : (tensor<64x96xf32>) -> tensor<64x96xf32>
    %lk = tx8be.load_var %k : (tensor<32x96xf16>) -> tensor<32x96xf16>
    %lc = tx8be.load_var %c : (tensor<1x32xf32>) -> tensor<1x32xf32>
    %m = tx8be.matmul %lk, %l : (tensor<32x96xf16>, tensor<64x96xf32>) -> tensor<64x32xf32>
    %s = tx8be.add %m, %lc : (tensor<64x32xf32>, tensor<1x32xf32>) -> tensor<64x32xf32>
    %r = tx8be.relu %s : (tensor<64x32xf32>) -> tensor<64x32xf32>
    %o = tx8be.store_var %r : (tensor<64x32xf32>) -> tensor<64x32xf32>
    tx8be.yield %o : tensor<64x32xf32>
  }
  return %0 : tensor<64x32xf32>
}
)mlir";

struct Parsed {
  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  explicit Parsed(const std::string& text) {
    mlir::DialectRegistry registry;
    register_dialects(registry);
    context.appendDialectRegistry(registry);
    module = mlir::parseSourceString<mlir::ModuleOp>(text, &context);
  }
  GroupOp group() {
    GroupOp found;
    module->walk([&](GroupOp g) { found = g; });
    return found;
  }
};

std::vector<mlir::Operation*> body(GroupOp group) {
  std::vector<mlir::Operation*> ops;
  for (mlir::Operation& op : group.getBodyBlock().without_terminator()) ops.push_back(&op);
  return ops;
}

// A plan as the stages would build one: 2x2 tiles, 16-row steps, the weight and bias loaded once,
// a three-stage pipeline, double-buffered input and output, scratch for the matmul.
GroupPlan sample_plan(GroupOp group) {
  const std::vector<mlir::Operation*> ops = body(group);  // l lk lc m s r o
  GroupPlan plan;
  plan.split.sharding = {2, 2};
  plan.split.slice = {16, 16};
  plan.split.steps = 2;
  const std::vector<std::vector<int32_t>> shardings = {{2, 1}, {2, 1}, {1, 2}, {2, 2}, {2, 2}, {2, 2}, {2, 2}};
  const std::vector<std::vector<int64_t>> slices = {{16, 96}, {16, 96}, {1, 16}, {16, 16},
                                                    {16, 16}, {16, 16}, {16, 16}};
  for (size_t i = 0; i < ops.size(); ++i) {
    plan.split.values.push_back({ops[i]->getResult(0), shardings[i], slices[i], i == 1 || i == 2});
  }
  for (int64_t step = 0; step < 2; ++step) {
    plan.pipeline.cycles.push_back({{ops[0], step, PipelineEngine::Load}});
    plan.pipeline.cycles.push_back({{ops[3], step, PipelineEngine::NE}, {ops[4], step, PipelineEngine::CT}});
    plan.pipeline.cycles.push_back({{ops[5], step, PipelineEngine::CT}, {ops[6], step, PipelineEngine::Store}});
  }
  plan.spm.buffers.push_back({ops[0]->getResult(0), nullptr, 16 * 96 * 4, 2, 0, 1, 0});
  plan.spm.buffers.push_back({ops[1]->getResult(0), nullptr, 16 * 96 * 2, 1, 0, 5, 12288});
  plan.spm.buffers.push_back({ops[2]->getResult(0), nullptr, 16 * 4, 1, 0, 5, 15360});
  plan.spm.buffers.push_back({nullptr, ops[3], 4096, 1, 1, 1, 15424});
  plan.spm.buffers.push_back({ops[6]->getResult(0), nullptr, 16 * 16 * 4, 2, 2, 5, 19520});
  plan.spm.peak = 19520 + 2 * 1024;
  plan.spm.lowerBound = 20000;
  plan.estimatedCycles = 123456;
  return plan;
}

// Buffers compared without their lifetimes (not part of the attribute form), in a fixed order.
std::vector<std::tuple<mlir::Value, mlir::Operation*, uint64_t, int32_t, uint64_t>> buffers(const SpmPlan& spm) {
  std::vector<std::tuple<mlir::Value, mlir::Operation*, uint64_t, int32_t, uint64_t>> out;
  for (const SpmBuffer& b : spm.buffers) out.emplace_back(b.value, b.scratchOf, b.bytes, b.copies, b.offset);
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return std::get<4>(a) < std::get<4>(b); });
  return out;
}

void expect_same_plan(const GroupPlan& got, const GroupPlan& want) {
  EXPECT_EQ(got.status, PlanStatus::Ok);
  EXPECT_EQ(got.split.sharding, want.split.sharding);
  EXPECT_EQ(got.split.slice, want.split.slice);
  EXPECT_EQ(got.split.steps, want.split.steps);
  ASSERT_EQ(got.split.values.size(), want.split.values.size());
  for (size_t i = 0; i < want.split.values.size(); ++i) {
    EXPECT_EQ(got.split.values[i].value, want.split.values[i].value) << "value " << i;
    EXPECT_EQ(got.split.values[i].sharding, want.split.values[i].sharding) << "value " << i;
    EXPECT_EQ(got.split.values[i].slice, want.split.values[i].slice) << "value " << i;
    EXPECT_EQ(got.split.values[i].stepInvariant, want.split.values[i].stepInvariant) << "value " << i;
  }
  ASSERT_EQ(got.pipeline.cycles.size(), want.pipeline.cycles.size());
  for (size_t c = 0; c < want.pipeline.cycles.size(); ++c) {
    ASSERT_EQ(got.pipeline.cycles[c].size(), want.pipeline.cycles[c].size()) << "cycle " << c;
    for (size_t i = 0; i < want.pipeline.cycles[c].size(); ++i) {
      EXPECT_EQ(got.pipeline.cycles[c][i].op, want.pipeline.cycles[c][i].op) << "cycle " << c;
      EXPECT_EQ(got.pipeline.cycles[c][i].step, want.pipeline.cycles[c][i].step) << "cycle " << c;
      EXPECT_EQ(got.pipeline.cycles[c][i].engine, want.pipeline.cycles[c][i].engine) << "cycle " << c;
    }
  }
  EXPECT_EQ(buffers(got.spm), buffers(want.spm));
  EXPECT_EQ(got.spm.peak, want.spm.peak);
  EXPECT_EQ(got.spm.lowerBound, want.spm.lowerBound);
  EXPECT_EQ(got.estimatedCycles, want.estimatedCycles);
}

TEST(PlanAttributes, WriteThenReadGivesThePlanBack) {
  Parsed p(kGroup);
  ASSERT_TRUE(p.module);
  GroupOp group = p.group();
  const GroupPlan plan = sample_plan(group);
  writePlan(group, plan);
  ASSERT_TRUE(mlir::succeeded(mlir::verify(*p.module)));
  mlir::FailureOr<GroupPlan> read = readPlan(group);
  ASSERT_TRUE(mlir::succeeded(read));
  expect_same_plan(*read, plan);

  // What codegen reads: the per-op attributes.
  auto load = mlir::cast<LoadVarOp>(body(group)[0]);
  ASSERT_TRUE(load.getDevInfo());
  EXPECT_EQ(load.getDevInfo()->getSourceType(), 0);
  EXPECT_TRUE(load.getDevInfo()->getMultiBufEn());
  EXPECT_EQ(load.getDevInfo()->getMemAddr().asArrayRef(), llvm::ArrayRef<int64_t>({0, 16 * 96 * 4}));
  auto matmul = mlir::cast<MatMulOp>(body(group)[3]);
  EXPECT_EQ(matmul.getDevInfo()->getImmAddr(), 15424);
  EXPECT_EQ(matmul.getDevInfo()->getImmSize(), 4096u);
  EXPECT_EQ(matmul.getTileParallel()->getShapeSpatialSharding().asArrayRef(), llvm::ArrayRef<int32_t>({2, 2}));
  EXPECT_EQ(mlir::cast<StoreVarOp>(body(group)[6]).getDevInfo()->getSourceType(), 2);
}

TEST(PlanAttributes, ThePlanSurvivesPrintingAndParsing) {
  std::string text;
  {
    Parsed p(kGroup);
    writePlan(p.group(), sample_plan(p.group()));
    llvm::raw_string_ostream os(text);
    p.module->print(os);
  }
  Parsed q(text);
  ASSERT_TRUE(q.module) << text;
  mlir::FailureOr<GroupPlan> read = readPlan(q.group());
  ASSERT_TRUE(mlir::succeeded(read));
  // The same plan over the parsed module's ops.
  expect_same_plan(*read, sample_plan(q.group()));
}

TEST(PlanAttributes, AnUncomputedPartIsNotWrittenAndAStaleOneIsRemoved) {
  Parsed p(kGroup);
  GroupOp group = p.group();
  writePlan(group, sample_plan(group));
  GroupPlan split_only = sample_plan(group);
  split_only.pipeline = {};
  split_only.spm = {};
  split_only.estimatedCycles = 0;
  writePlan(group, split_only);
  EXPECT_FALSE(group.getPipelineAttr());
  EXPECT_FALSE(group.getSpmAllocSizeAttr());
  EXPECT_FALSE(group.getEstimatedCyclesAttr());
  mlir::FailureOr<GroupPlan> read = readPlan(group);
  ASSERT_TRUE(mlir::succeeded(read));
  EXPECT_TRUE(read->spm.buffers.empty());
  EXPECT_TRUE(read->pipeline.cycles.empty());
  EXPECT_EQ(read->split.values.size(), 7u);
}

TEST(PlanAttributes, ReadingAGroupWithoutAPlanFails) {
  Parsed p(kGroup);
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler handler(&p.context, [&](mlir::Diagnostic& d) {
    diagnostics += d.str();
    return mlir::success();
  });
  EXPECT_TRUE(mlir::failed(readPlan(p.group())));
  EXPECT_NE(diagnostics.find("has no plan"), std::string::npos) << diagnostics;

  // A group-level plan whose ops lost their slicing is refused too.
  GroupOp group = p.group();
  writePlan(group, sample_plan(group));
  body(group)[4]->removeAttr("tile_parallel");
  diagnostics.clear();
  EXPECT_TRUE(mlir::failed(readPlan(group)));
  EXPECT_NE(diagnostics.find("has no slicing"), std::string::npos) << diagnostics;
}

}  // namespace
}  // namespace tg::compiler::tx8be
