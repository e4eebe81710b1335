#include "tilegraph/tx8/tx8_backend.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "ddr_buffer.h"
#include "tilegraph/core/error.h"
#include "tilegraph/cpu/cpu_backend.h"
#include "tilegraph/jit/compiler.h"
#include "tilegraph/runtime/graph_mode.h"
#include "tilegraph/runtime/tensor_data.h"
#include "tilegraph/tx8/graph_split.h"

namespace tg::tx8 {

namespace {

using compiler::ChipProgram;
using compiler::DdrBinding;

// A compiled chip run and the DDR it may use for itself; shared by the plans that re-bind it.
struct CompiledRun {
  std::unique_ptr<ChipProgram> program;
  std::unique_ptr<DdrBlock> scratch;
};

struct ChipStep {
  std::shared_ptr<CompiledRun> compiled;
  DdrBinding binding;
};

struct Copy {
  uint64_t device;
  void* host;
  size_t bytes;
};

// A run on the CPU backend: its graph over host copies of what it touches.
struct CpuStep {
  RunGraph run;
  std::vector<std::unique_ptr<Buffer>> staging;
  std::vector<Copy> copy_in, copy_out;
  size_t nodes = 0;
};

// What a captured graph holds: every run of the step, in order (capture = compile).
class Plan final : public CapturedGraph {
 public:
  std::vector<std::variant<ChipStep, CpuStep>> steps;
  size_t staging_bytes = 0;

  size_t bytes() const override {
    size_t total = staging_bytes;
    for (const auto& step : steps) {
      if (const auto* chip = std::get_if<ChipStep>(&step)) total += chip->compiled->program->host_bytes();
    }
    return total;
  }
};

std::string op_kind(const Tensor& node) {
  std::string kind(op_name(node.op));
  if (node.op == Op::UNARY) kind += "(" + std::string(unary_op_name(UnaryOp(node.op_params[0]))) + ")";
  if (node.op == Op::GLU) kind += "(" + std::string(glu_op_name(GluOp(node.op_params[0]))) + ")";
  return kind;
}

std::string label(const Tensor& t) {
  return std::string(op_name(t.op)) + (t.name[0] ? " '" + std::string(t.name) + "'" : std::string());
}

class Tx8BackendImpl final : public Tx8Backend {
 public:
  Tx8BackendImpl(const BackendOptions& options, Tx8Options tx8)
      : tx8_(std::move(tx8)), device_(std::make_shared<Device>(tx8_.chip)), cpu_(cpu::make_cpu_backend(options)) {
    if (!tx8_.compiler.compile || !tx8_.compiler.supports) throw Error("tx8: no chip compiler given");
    if (!tx8_.notice) tx8_.notice = [](const std::string& line) { std::fprintf(stderr, "tx8: %s\n", line.c_str()); };
    // The CPU runs pieces of graphs whose memory the backend stages anew each time: nothing
    // for it to capture.
    if (GraphMode* mode = cpu_->graph_mode()) {
      GraphModeConfig off = mode->config();
      off.enabled = false;
      mode->set_config(off);
    }
  }

  std::string_view name() const override { return "tx8"; }
  // The chip is simulated on the calling thread; runs that fall back go to the CPU backend's pool.
  int threads() const override { return cpu_->threads(); }
  std::unique_ptr<Buffer> alloc_buffer(size_t bytes) override { return std::make_unique<DdrBuffer>(device_, bytes); }
  bool host_buffers() const override { return false; }

  // f32, f16, bf16 and q8_0 run on the chip; GGUF's other quantized types become q8_0 (8 bits
  // with a scale per 32 weights: at least their precision, on the NE's int8 path).
  DType weight_type(DType stored) const override {
    return is_quantized(stored) && stored != DType::Q8_0 ? DType::Q8_0 : stored;
  }

  bool supports_op(const Tensor& node, std::string* why) const override { return tx8_.compiler.supports(node, why); }

  void compute(const Graph& graph) override {
    std::lock_guard<std::mutex> lock(mutex_);
    count([](Tx8Stats& s) { ++s.computes; });
    mode_.compute(*this, graph, [&] {
      std::unique_ptr<Plan> plan = build_plan(graph, nullptr);
      run_plan(*plan, false);
    });
  }

  bool can_capture(const Graph& graph, std::string* why) const override {
    if (graph.empty() && why) *why = "empty graph";
    return !graph.empty();
  }

  std::unique_ptr<CapturedGraph> capture(const Graph& graph) override {
    std::unique_ptr<Plan> plan = build_plan(graph, nullptr);
    run_plan(*plan, false);
    return plan;
  }

  void launch(CapturedGraph& captured) override { run_plan(static_cast<Plan&>(captured), true); }

  bool rebind(CapturedGraph& captured, const Graph& graph) override {
    Plan& plan = static_cast<Plan&>(captured);
    try {
      std::unique_ptr<Plan> fresh = build_plan(graph, &plan);
      plan.steps = std::move(fresh->steps);
      plan.staging_bytes = fresh->staging_bytes;
    } catch (const Error&) {
      return false;  // graph mode captures again, which reports the problem
    }
    return true;
  }

  GraphMode* graph_mode() override { return &mode_; }

  Tx8Stats stats() const override {
    std::lock_guard<std::mutex> lock(stats_mutex_);
    return stats_;
  }
  const sim::ChipConfig& chip_config() const override { return tx8_.chip; }

 private:
  template <class Update>
  void count(Update update) const {
    std::lock_guard<std::mutex> lock(stats_mutex_);
    update(stats_);
  }

  // Whether the chip runs `node`; the first time an op kind does not, says why.
  bool on_chip(const Tensor& node) {
    std::string why;
    if (tx8_.compiler.supports(node, &why)) return true;
    const std::string kind = op_kind(node);
    note_fallback(kind, why.empty() ? "the chip does not run it" : why, kind);
    return false;
  }

  // Says once per `what` (an op kind, or a reason the compiler gave) that it runs on the CPU.
  void note_fallback(const std::string& what, const std::string& why, const std::string& key) {
    bool first = false;
    count([&](Tx8Stats& s) { first = s.fallbacks.emplace(key, why).second; });
    if (first) tx8_.notice(what + " runs on the CPU backend: " + why);
  }

  // The DDR address of `t`'s data, which must be in this backend's memory.
  uint64_t address_of(const Tensor& t) const {
    auto* buffer = dynamic_cast<DdrBuffer*>(find_device_buffer(t.data));
    if (!buffer) {
      throw Error("tx8: " + describe(t) + " is not in the chip's DDR (allocate it from the tx8 backend's buffers)");
    }
    return buffer->device_address() + uint64_t(static_cast<const char*>(t.data) - static_cast<char*>(buffer->base()));
  }

  // A host copy of a weight in DDR, read once: the compiler imports weights' bytes, and CPU runs
  // read them without copying them out each step.
  void* weight_on_host(const Tensor& weight) {
    if (tensor_on_host(weight)) return weight.data;
    std::lock_guard<std::mutex> lock(mirror_mutex_);
    auto [it, added] = weight_mirror_.try_emplace(weight.data);
    if (added) {
      it->second.resize(weight.nbytes());
      tensor_get(weight, it->second.data(), 0, weight.nbytes());
    }
    return it->second.data();
  }

  static void check_data(const Graph& graph) {
    for (const Tensor* node : graph.nodes()) {
      if (!node->is_noop() && !node->data) throw Error("tx8: " + label(*node) + " has no data (allocate the graph)");
    }
    for (const Tensor* leaf : graph.leafs()) {
      if (!leaf->is_empty() && !leaf->data) throw Error("tx8: leaf " + describe(*leaf) + " has no data");
    }
  }

  // The plan of `graph`: each run compiled (or, re-binding, the program of `reuse`'s run at the
  // same place) or staged for the CPU.
  std::unique_ptr<Plan> build_plan(const Graph& graph, const Plan* reuse) {
    check_data(graph);
    const std::vector<Run> runs = split_runs(graph, [&](const Tensor& node) { return on_chip(node); });
    if (reuse && reuse->steps.size() != runs.size()) throw Error("tx8: re-bind: the graph splits differently");
    const std::vector<int64_t> last = last_readers(graph);
    auto plan = std::make_unique<Plan>();
    for (size_t k = 0; k < runs.size(); ++k) {
      RunGraph run = extract_run(graph, runs[k], last);
      if (runs[k].chip) {
        std::shared_ptr<CompiledRun> compiled;
        if (reuse) {
          if (const auto* old = std::get_if<ChipStep>(&reuse->steps[k])) compiled = old->compiled;
        } else {
          compiled = compile(run);
        }
        if (compiled) {
          plan->steps.emplace_back(ChipStep{compiled, binding(run, *compiled)});
          continue;
        }
      }
      plan->steps.emplace_back(stage_on_cpu(std::move(run), runs[k].nodes.size(), plan->staging_bytes));
    }
    return plan;
  }

  // Compiles a chip run; null if the compiler refuses it (the run then goes to the CPU).
  std::shared_ptr<CompiledRun> compile(RunGraph& run) {
    for (Tensor* leaf : run.graph.leafs()) {
      if (leaf->flags & kFlagParam) leaf->data = weight_on_host(*run.original.at(leaf));
    }
    compiler::CompileOptions options;
    options.chip = tx8_.chip;
    options.plan_memo = plans_;
    const auto start = std::chrono::steady_clock::now();
    auto compiled = std::make_shared<CompiledRun>();
    try {
      compiled->program = tx8_.compiler.compile(run.graph, options);
    } catch (const Error& e) {
      count([](Tx8Stats& s) { ++s.compile_failures; });
      note_fallback("a run the compiler refused", e.what(), std::string("compile: ") + e.what());
      return nullptr;
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    count([&](Tx8Stats& s) {
      ++s.compiles;
      s.compile_seconds += seconds;
      s.jit_compiles += compiled->program->report().jit_compiles;
      s.groups_searched += uint64_t(compiled->program->report().search.searched);
      s.groups_reused += uint64_t(compiled->program->report().search.reused);
    });
    compiled->scratch = std::make_unique<DdrBlock>(device_, compiled->program->scratch_bytes());
    return compiled;
  }

  // The program's tensors' places (chip_program.h): the run graph's non-weight leaves, its
  // outputs then the state arguments it writes, weights by the importer's constant keys.
  DdrBinding binding(const RunGraph& run, const CompiledRun& compiled) const {
    DdrBinding b;
    std::vector<const Tensor*> arguments;
    auto weights = std::make_shared<std::unordered_map<std::string, uint64_t>>();
    for (const Tensor* leaf : run.graph.leafs()) {
      const Tensor& original = *run.original.at(leaf);
      if (leaf->flags & kFlagParam) {
        const std::string name = leaf->name[0] ? std::string(leaf->name) : std::string(op_name(leaf->op));
        std::string key = name;
        for (int n = 1; weights->count(key); ++n) key = name + "#" + std::to_string(n);
        (*weights)[key] = tensor_on_host(original) ? sim::kNoAddress : address_of(original);
      } else {
        arguments.push_back(leaf);
        b.arguments.push_back(address_of(original));
      }
    }
    for (const Tensor* out : run.graph.outputs()) b.results.push_back(address_of(*run.original.at(out)));
    // State results follow, in argument order: each argument the run writes (SET_ROWS or CPY
    // into it), unless its last write is an output already (graph_import.h).
    std::vector<const Tensor*> states;
    for (const Tensor* argument : arguments) {
      const Tensor* last_write = nullptr;
      for (const Tensor* node : run.graph.nodes()) {
        if ((node->op == Op::SET_ROWS || node->op == Op::CPY) && node->view_src == argument) last_write = node;
      }
      const auto& outputs = run.graph.outputs();
      if (!last_write || std::find(outputs.begin(), outputs.end(), last_write) != outputs.end()) continue;
      states.push_back(argument);
      b.results.push_back(address_of(*run.original.at(argument)));
    }
    check_sizes("argument", compiled.program->argument_bytes(), b.arguments.size(),
                [&](size_t i) { return run.original.at(arguments[i]); });
    check_sizes("result", compiled.program->result_bytes(), b.results.size(), [&](size_t i) {
      const size_t n_out = run.graph.outputs().size();
      return run.original.at(i < n_out ? run.graph.outputs()[i] : states[i - n_out]);
    });
    b.constant = [weights](std::string_view key) {
      auto it = weights->find(std::string(key));
      return it == weights->end() ? sim::kNoAddress : it->second;
    };
    b.scratch = compiled.scratch->address();
    return b;
  }

  // The program and the tensors bound to it must agree on how many there are and how large each
  // is: a mismatch would have the chip read or write past a tensor.
  template <class TensorAt>
  static void check_sizes(const char* what, const std::vector<uint64_t>& bytes, size_t count, TensorAt tensor_at) {
    if (bytes.size() != count) {
      throw Error(std::string("tx8: the compiled program has ") + std::to_string(bytes.size()) + " " + what +
                  "s, the run's graph " + std::to_string(count));
    }
    for (size_t i = 0; i < count; ++i) {
      const Tensor& t = *tensor_at(i);
      if (bytes[i] > t.nbytes()) {
        throw Error(std::string("tx8: the compiled program's ") + what + " " + std::to_string(i) + " is " +
                    std::to_string(bytes[i]) + " bytes, larger than " + describe(t));
      }
    }
  }

  // Points the run's tensors at host copies of the memory they use: weights at their host copy,
  // everything else at staging buffers filled from DDR before the run (what it reads and what
  // it updates in place) and written back after it (what it computes).
  CpuStep stage_on_cpu(RunGraph run, size_t nodes, size_t& staging_bytes) {
    CpuStep step;
    step.nodes = nodes;
    std::unordered_map<const Tensor*, char*> host;  // storage -> its host copy
    std::unordered_map<const Tensor*, bool> computed;
    for (const auto& [clone, original] : run.original) {
      if (clone->op != Op::NONE && !clone->view_src) computed[original] = true;
    }
    auto host_of = [&](const Tensor* storage, bool read) -> char* {
      if (auto it = host.find(storage); it != host.end()) return it->second;
      char* p;
      if (storage->flags & kFlagParam) {
        p = static_cast<char*>(weight_on_host(*storage));
      } else {
        step.staging.push_back(make_host_buffer(storage->nbytes()));
        staging_bytes += storage->nbytes();
        p = static_cast<char*>(step.staging.back()->base());
        if (read && !computed.count(storage)) step.copy_in.push_back({address_of(*storage), p, storage->nbytes()});
      }
      host[storage] = p;
      return p;
    };
    // The clones are the run's own (run.ctx), to point where it computes.
    for (const auto& [clone, original] : run.original) {
      const Tensor* storage = storage_of(original);
      if (tensor_on_host(*storage)) continue;
      // Leaves are read; nodes are computed, and an in-place one (into a cache) starts from the
      // memory it updates.
      const bool read = clone->op == Op::NONE || clone->view_src != nullptr;
      const_cast<Tensor*>(clone)->data =
          host_of(storage, read) + (static_cast<const char*>(original->data) - static_cast<const char*>(storage->data));
    }
    for (const Tensor* written : run.written) {
      const Tensor* storage = storage_of(written);
      if (tensor_on_host(*storage)) continue;
      bool seen = false;
      for (const Copy& c : step.copy_out) seen |= c.host == host.at(storage);
      if (!seen) step.copy_out.push_back({address_of(*storage), host.at(storage), storage->nbytes()});
    }
    step.run = std::move(run);
    return step;
  }

  void run_plan(Plan& plan, bool replay) {
    for (auto& step : plan.steps) {
      if (auto* chip = std::get_if<ChipStep>(&step)) {
        sim::ChipReport report;
        {
          std::lock_guard<std::mutex> lock(device_->mutex);
          report = chip->compiled->program->run(device_->chip, chip->binding);
          // The host waits for each run (the next step may read its results); settling keeps
          // the chip's instruction record, and so each run's scheduling, to one run's size.
          device_->chip.settle();
        }
        count([&](Tx8Stats& s) {
          ++s.chip_runs;
          if (replay) ++s.replayed_runs;
          s.simulated_cycles += report.total_cycles;
          s.simulated_seconds += report.seconds;
        });
      } else {
        CpuStep& cpu = std::get<CpuStep>(step);
        {
          std::lock_guard<std::mutex> lock(device_->mutex);
          for (const Copy& c : cpu.copy_in) device_->chip.ddr().read(c.device, c.host, c.bytes);
        }
        cpu_->compute(cpu.run.graph);
        {
          std::lock_guard<std::mutex> lock(device_->mutex);
          for (const Copy& c : cpu.copy_out) device_->chip.ddr().write(c.device, c.host, c.bytes);
        }
        count([&](Tx8Stats& s) {
          ++s.cpu_runs;
          s.cpu_nodes += cpu.nodes;
        });
      }
    }
  }

  Tx8Options tx8_;
  std::shared_ptr<Device> device_;
  std::unique_ptr<Backend> cpu_;
  std::mutex mutex_;  // one compute at a time
  // The sharding search's plans, shared by every run the backend compiles: identical layers in
  // different runs (and steps) are searched once.
  std::shared_ptr<compiler::GroupPlanMemo> plans_ = compiler::make_group_plan_memo();
  GraphMode mode_;
  mutable std::mutex stats_mutex_;
  mutable Tx8Stats stats_;
  std::mutex mirror_mutex_;
  std::unordered_map<const void*, std::vector<uint8_t>> weight_mirror_;
};

}  // namespace

std::unique_ptr<Backend> make_tx8_backend(const BackendOptions& options, Tx8Options tx8) {
  tx8.chip.validate();
  return std::make_unique<Tx8BackendImpl>(options, std::move(tx8));
}

std::string format_stats(const Tx8Stats& s) {
  std::string out = "compiles " + std::to_string(s.compiles) + ", replays " + std::to_string(s.replayed_runs) +
                    " (of " + std::to_string(s.chip_runs) + " chip runs), compile failures " +
                    std::to_string(s.compile_failures) + ", CPU runs " + std::to_string(s.cpu_runs) + " (" +
                    std::to_string(s.cpu_nodes) + " nodes)";
  out +=
      ", groups searched " + std::to_string(s.groups_searched) + ", reusing a plan " + std::to_string(s.groups_reused);
  char seconds[64];
  std::snprintf(seconds, sizeof seconds, ", compile %.2f s", s.compile_seconds);
  out += seconds;
  const jit::CompilerStats jit = jit::Compiler::instance().stats();
  out += ", JIT: memory hits " + std::to_string(jit.memory_hits) + ", disk hits " + std::to_string(jit.disk_hits) +
         ", builds " + std::to_string(jit.compiles);
  return out;
}

}  // namespace tg::tx8
