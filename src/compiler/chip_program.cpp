// compile_graph (chip_program.h): import -> the front end -> data-split and the back end
// (--tx8-backend) -> tx8-codegen -> the JIT, and the program that runs the groups' kernels on a chip with a DDR
// binding.
//
// The generated kernels call the simulator's functions (the oplib, Tile::wait, execute) through
// ordinary undefined symbols that dlopen resolves against the process: the executables that
// link the compiler export their symbols and link tg_sim whole (tg_export_sim in
// src/compiler/CMakeLists.txt). A kernel therefore runs on the process's one simulator (the
// Chip object it is handed is that simulator's) and never carries a copy of it.
#include "tilegraph/compiler/chip_program.h"

#include <chrono>
#include <cstring>
#include <map>
#include <set>

#include <mlir/Dialect/Func/IR/FuncOps.h>
#include <mlir/IR/Diagnostics.h>
#include <mlir/IR/MLIRContext.h>
#include <mlir/Pass/PassManager.h>

#include "Transforms/ChipOption.h"
#include "Transforms/Codegen.h"
#include "Transforms/GroupTags.h"
#include "tilegraph/compiler/Dialect/Tx8be/Transforms/GroupPlan.h"
#include "tilegraph/compiler/Dialect/Tx8be/Transforms/Passes.h"
#include "tilegraph/compiler/graph_import.h"
#include "tilegraph/compiler/registration.h"
#include "tilegraph/core/error.h"
#include "tilegraph/jit/compiler.h"
#include "tilegraph/sim/memory.h"

namespace tg::compiler {

namespace {

using namespace tx8be;

uint64_t alignUp(uint64_t bytes, uint64_t align) { return (bytes + align - 1) / align * align; }

uint64_t tensorBytes(mlir::Value value) {
  auto type = value.getType().cast<mlir::RankedTensorType>();
  uint64_t elements = 1;
  for (int64_t d : type.getShape()) elements *= uint64_t(d);
  return elements * uint64_t((type.getElementTypeBitWidth() + 7) / 8);
}

// Where one entry of a kernel's parameter block points at run time.
struct Address {
  enum class Kind { Argument, Result, Scratch, Constant } kind = Kind::Scratch;
  size_t index = 0;     // argument, result or constant index
  uint64_t offset = 0;  // scratch offset
};

// A constant the program may have to place: its key (empty for data the module holds inline)
// and a copy of its bytes, with its place in the scratch DDR when the binding has no address.
struct Constant {
  std::string key;
  std::vector<std::byte> bytes;
  uint64_t offset = 0;
};

struct GroupKernel {
  jit::EntryFn entry = nullptr;
  std::vector<Address> params;
  bool barrier = true;
};

class CompiledProgram final : public ChipProgram {
 public:
  uint64_t scratch_bytes() const override { return scratch_bytes_; }
  const std::vector<uint64_t>& argument_bytes() const override { return argument_bytes_; }
  const std::vector<uint64_t>& result_bytes() const override { return result_bytes_; }
  const CompileReport& report() const override { return report_; }
  size_t host_bytes() const override {
    size_t bytes = sizeof(*this);
    for (const Constant& c : constants_) bytes += c.bytes.size() + c.key.size();
    for (const GroupKernel& g : groups_) bytes += g.params.size() * sizeof(Address);
    return bytes;
  }

  sim::ChipReport run(sim::Chip& chip, const DdrBinding& binding) override {
    if (binding.arguments.size() != arguments_ || binding.results.size() != results_) {
      throw Error("ChipProgram::run: the binding has " + std::to_string(binding.arguments.size()) + " arguments and " +
                  std::to_string(binding.results.size()) + " results, the program " + std::to_string(arguments_) +
                  " and " + std::to_string(results_));
    }
    if (chip.config().mesh_x != mesh_x_ || chip.config().mesh_y != mesh_y_) {
      throw Error("ChipProgram::run: compiled for a " + std::to_string(mesh_x_) + "x" + std::to_string(mesh_y_) +
                  " mesh, the chip is " + std::to_string(chip.config().mesh_x) + "x" +
                  std::to_string(chip.config().mesh_y));
    }
    std::vector<uint64_t> constants(constants_.size());
    for (size_t i = 0; i < constants_.size(); ++i) {
      const Constant& c = constants_[i];
      uint64_t addr = sim::kNoAddress;
      if (!c.key.empty() && binding.constant) addr = binding.constant(c.key);
      if (addr == sim::kNoAddress) {
        addr = binding.scratch + c.offset;
        chip.ddr().write(addr, c.bytes.data(), c.bytes.size());
      }
      constants[i] = addr;
    }
    // The program starts on an idle chip, as the host launches it: it reads what earlier runs wrote
    // to DDR, which no SPM dependency orders, and a group's window would otherwise take in the tail
    // of an earlier program on some of its tiles.
    chip.barrier();
    const uint64_t first = chip.mark();
    std::vector<uint64_t> marks;
    std::vector<uint64_t> params;
    for (const GroupKernel& group : groups_) {
      marks.push_back(chip.mark());
      params.clear();
      for (const Address& a : group.params) {
        switch (a.kind) {
          case Address::Kind::Argument: params.push_back(binding.arguments[a.index]); break;
          case Address::Kind::Result: params.push_back(binding.results[a.index]); break;
          case Address::Kind::Scratch: params.push_back(binding.scratch + a.offset); break;
          case Address::Kind::Constant: params.push_back(constants[a.index]); break;
        }
      }
      for (int tile = 0; tile < chip.tile_count(); ++tile) group.entry(uint32_t(tile), &chip, params.data());
      if (group.barrier) chip.barrier();
    }
    marks.push_back(chip.mark());
    for (size_t g = 0; g < groups_.size(); ++g) {
      report_.groups[g].simulated_cycles = chip.report_window(marks[g], marks[g + 1]).total_cycles;
    }
    return chip.report_window(first);
  }

  std::vector<GroupKernel> groups_;
  std::vector<Constant> constants_;
  uint64_t scratch_bytes_ = 0;
  size_t arguments_ = 0, results_ = 0;
  std::vector<uint64_t> argument_bytes_, result_bytes_;
  int mesh_x_ = 0, mesh_y_ = 0;
  CompileReport report_;
};

// Runs `pm` on `module`; a failure throws tg::Error with the diagnostics.
void runPasses(mlir::PassManager& pm, mlir::ModuleOp module, const std::string& stage) {
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler handler(module.getContext(), [&](mlir::Diagnostic& d) {
    if (d.getSeverity() == mlir::DiagnosticSeverity::Error) diagnostics += "\n  " + d.str();
    return mlir::success();
  });
  if (mlir::failed(pm.run(module))) throw Error("compile_graph: " + stage + " failed:" + diagnostics);
}

std::string groupOps(GroupOp group) {
  std::string ops;
  for (mlir::Operation& op : group.getBodyBlock().without_terminator()) {
    if (mlir::isa<LoadVarOp, LoadConstOp, StoreVarOp>(op)) continue;
    if (!ops.empty()) ops += '+';
    ops += op.getName().getStringRef().drop_front(6).str();
  }
  return ops;
}

// The group's SPM buffers over its pipeline cycles, for the report's occupancy chart: the plan's
// attributes keep offsets but not lifetimes, so the allocation is run again on the plan it
// placed (it is deterministic: the same buffers at the same offsets).
void describeSpm(GroupOp group, const sim::ChipConfig& chip, GroupReport& report) {
  mlir::FailureOr<GroupPlan> plan = readPlan(group);
  if (mlir::failed(plan) || plan->pipeline.cycles.empty()) return;
  report.pipeline_cycles = int64_t(plan->pipeline.cycles.size());
  SpmPlan spm;
  if (allocateSpm(group, plan->split, plan->pipeline, chip, spm) != PlanStatus::Ok) return;
  for (const SpmBuffer& buffer : spm.buffers) {
    mlir::Operation* owner = buffer.value ? buffer.value.getDefiningOp() : buffer.scratchOf;
    std::string name = owner ? owner->getName().getStringRef().drop_front(6).str() : "argument";
    if (!buffer.value) name = "scratch of " + name;
    report.spm_buffers.push_back(SpmBufferSpan{name, buffer.offset, buffer.bytes * uint64_t(buffer.copies),
                                               buffer.firstCycle, buffer.lastCycle});
  }
}

}  // namespace

std::unique_ptr<ChipProgram> compile_graph(const Graph& graph, const CompileOptions& options) {
  const auto started = std::chrono::steady_clock::now();
  double program_search_seconds = 0;
  GroupCostCounts program_counts;
  auto progress = [&](std::string_view stage, size_t done, size_t total) {
    if (options.progress) options.progress(CompileProgress{stage, done, total});
  };
  mlir::DialectRegistry registry;
  register_dialects(registry);
  register_passes();
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();

  progress("import", 0, 1);
  ImportedGraph imported = import_graph(context, graph);
  mlir::ModuleOp module = *imported.module;
  setModuleChip(module, options.chip);
  progress("import", 1, 1);

  progress("front end", 0, 1);
  {
    mlir::PassManager pm(&context);
    buildFrontendPipeline(pm, options.group_patterns_file);
    runPasses(pm, module, "the front end");
  }
  progress("front end", 1, 1);

  auto main = module.lookupSymbol<mlir::func::FuncOp>("main");
  std::vector<GroupOp> groups;
  main.walk([&](GroupOp group) { groups.push_back(group); });
  for (mlir::Operation& op : main.getBody().front()) {
    if (!mlir::isa<GroupOp, mlir::func::ReturnOp>(op)) {
      throw Error("compile_graph: " + op.getName().getStringRef().str() +
                  " is outside every group after the front end");
    }
  }

  // The plan of each group (data split, pipeline, SPM) and the program's DDR placement.
  progress("group-cost", 0, groups.size());
  {
    mlir::PassManager pm(&context);
    pm.addPass(createDataSplitPass());
    buildBackendPipeline(pm, &program_counts, options.plan_memo, options.matmul_k_split);
    const auto planning = std::chrono::steady_clock::now();
    runPasses(pm, module, "the back end");
    program_search_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - planning).count();
  }
  progress("group-cost", groups.size(), groups.size());

  progress("codegen", 0, groups.size());
  {
    mlir::PassManager pm(&context);
    pm.addPass(createCodegenPass());
    runPasses(pm, module, "tx8-codegen");
  }
  progress("codegen", groups.size(), groups.size());

  auto program = std::make_unique<CompiledProgram>();
  program->arguments_ = imported.arguments.size();
  program->results_ = imported.results.size();
  for (const Tensor* t : imported.arguments) program->argument_bytes_.push_back(t->nbytes());
  for (const Tensor* t : imported.results) program->result_bytes_.push_back(t->nbytes());
  program->mesh_x_ = options.chip.mesh_x;
  program->mesh_y_ = options.chip.mesh_y;

  // DDR: arguments and results where the binding says; every other group result in scratch;
  // then the constants the binding may not hold.
  llvm::DenseMap<mlir::Value, Address> places;
  for (mlir::BlockArgument argument : main.getArguments()) {
    places[argument] = Address{Address::Kind::Argument, argument.getArgNumber(), 0};
  }
  auto ret = mlir::cast<mlir::func::ReturnOp>(main.getBody().front().getTerminator());
  for (size_t i = 0; i < ret.getNumOperands(); ++i) {
    mlir::Value value = ret.getOperand(unsigned(i));
    if (value.isa<mlir::BlockArgument>() || places.count(value)) {
      throw Error("compile_graph: result " + std::to_string(i) +
                  " is an argument or another result unchanged (no group computes it)");
    }
    places[value] = Address{Address::Kind::Result, i, 0};
  }
  // opt-ddr's placement: each group result's scratch offset (-1: a function result), each
  // dense constant's, and the total.
  auto scratchAttr = module->getAttrOfType<mlir::IntegerAttr>("tx8be.scratch_bytes");
  auto constOffsets = module->getAttrOfType<mlir::DenseI64ArrayAttr>("tx8be.const_ddr_offsets");
  if (!scratchAttr) throw Error("compile_graph: the back end left no tx8be.scratch_bytes (opt-ddr)");
  uint64_t scratch = uint64_t(scratchAttr.getInt());
  for (GroupOp group : groups) {
    auto offsets = group->getAttrOfType<mlir::DenseI64ArrayAttr>("ddr_offsets");
    for (mlir::OpResult result : group.getResults()) {
      if (places.count(result)) continue;
      if (!offsets || int64_t(offsets.size()) <= int64_t(result.getResultNumber()) ||
          offsets.asArrayRef()[result.getResultNumber()] < 0) {
        throw Error("compile_graph: group " + std::to_string(group.getGroupId()) + " result " +
                    std::to_string(result.getResultNumber()) + " has no DDR place (ddr_offsets)");
      }
      places[result] = Address{Address::Kind::Scratch, 0, uint64_t(offsets.asArrayRef()[result.getResultNumber()])};
    }
  }
  std::map<int64_t, size_t> constantIndex;  // const_map_id -> program constant
  for (GroupOp group : groups) {
    for (LoadConstOp load : programConstants(group)) {
      const int64_t id = load.getConstMapId();
      if (constantIndex.count(id)) continue;
      Constant c;
      auto type = load.getOutput().getType().cast<mlir::RankedTensorType>();
      if (auto external = load.getValue().dyn_cast<ExternalDataAttr>()) {
        c.key = external.getKey().str();
        const HostTensor& data = imported.constants.get(c.key, external.getBytes(), external.getFingerprint());
        const auto* bytes = static_cast<const std::byte*>(data.data());
        c.bytes.assign(bytes, bytes + data.nbytes());
      } else {
        auto dense = load.getValue().cast<mlir::DenseElementsAttr>();
        const size_t total = size_t(tensorBytes(load.getOutput()));
        c.bytes.resize(total);
        const llvm::ArrayRef<char> raw = dense.getRawData();
        if (dense.isSplat()) {
          const size_t element = size_t((type.getElementTypeBitWidth() + 7) / 8);
          for (size_t at = 0; at < total; at += element) std::memcpy(c.bytes.data() + at, raw.data(), element);
        } else {
          std::memcpy(c.bytes.data(), raw.data(), total);
        }
      }
      // A dense constant where opt-ddr put it; an external one, bound by key, after the rest in
      // case the binding does not hold it.
      const int64_t placed =
          constOffsets && id < int64_t(constOffsets.size()) ? constOffsets.asArrayRef()[size_t(id)] : -1;
      if (placed >= 0) {
        c.offset = uint64_t(placed);
      } else {
        c.offset = scratch;
        scratch += alignUp(c.bytes.size(), options.chip.ddr.burst_bytes);
      }
      constantIndex[id] = program->constants_.size();
      program->constants_.push_back(std::move(c));
    }
  }
  program->scratch_bytes_ = scratch;

  progress("jit", 0, groups.size());
  for (size_t i = 0; i < groups.size(); ++i) {
    GroupOp group = groups[i];
    GroupKernel kernel;
    const std::string source = group->getAttrOfType<mlir::StringAttr>(kSourceAttr).getValue().str();
    const jit::Kernel loaded = jit::Compiler::instance().load_source(source, {}, jit::KernelType::kCpu);
    kernel.entry = loaded.entry;
    if (loaded.source == jit::KernelSource::kCompiled) ++program->report_.jit_compiles;
    for (mlir::Value input : group.getInputs()) kernel.params.push_back(places.lookup(input));
    for (mlir::Value result : group.getResults()) kernel.params.push_back(places.lookup(result));
    for (LoadConstOp load : programConstants(group)) {
      kernel.params.push_back(Address{Address::Kind::Constant, constantIndex[load.getConstMapId()], 0});
    }
    kernel.barrier = group.getNeedBarrier();
    program->groups_.push_back(std::move(kernel));

    GroupReport report;
    report.group_id = group.getGroupId();
    report.ops = groupOps(group);
    if (auto sharding = group.getShardingAttr())
      report.sharding.assign(sharding.asArrayRef().begin(), sharding.asArrayRef().end());
    if (auto slice = group.getSliceAttr()) report.slice.assign(slice.asArrayRef().begin(), slice.asArrayRef().end());
    report.steps = group.getStepsAttr() ? group.getStepsAttr().getInt() : 0;
    if (auto panel = group->getAttrOfType<mlir::IntegerAttr>("tx8be.k_panel")) report.k_panel = panel.getInt();
    report.noc_share = group->hasAttr("tx8be.noc_share");
    report.spm_peak = uint64_t(group.getSpmAllocSize().value_or(0));
    report.spm_lower_bound = uint64_t(group.getSpmLowerBound().value_or(0));
    report.estimated_cycles = uint64_t(group.getEstimatedCycles().value_or(0));
    report.template_of = group.getTemplateId();
    report.tiles = 1;
    for (int32_t parts : report.sharding) report.tiles *= parts;
    // A group working in DDR has no sharding: its moves' boxes go to every tile (MoveQueue).
    if (group.getGroupTag().value_or(0) == tx8be::kGroupTagInDdr) report.tiles = options.chip.tile_count();
    describeSpm(group, options.chip, report);
    program->report_.groups.push_back(std::move(report));
    progress("jit", i + 1, groups.size());
  }
  program->report_.compile_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  program->report_.search_seconds = program_search_seconds;
  program->report_.search = program_counts;
  return program;
}

}  // namespace tg::compiler
