// The tx8 backend over a stand-in for the TX8 compiler: ReferenceProgram (below) is compiled
// from a run's graph like a ChipProgram, and when run reads its arguments and weights from the
// chip's DDR at the binding's addresses, computes with the reference backend and writes its
// results back, so these tests check the backend's side of the contract (splitting, staging,
// bindings, capture = compile, replays, re-binds, fallbacks) independently of code generation.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "common/expect_error.h"
#include "common/tensor_utils.h"
#include "tilegraph/backends.h"
#include "tilegraph/core/context.h"
#include "tilegraph/core/ops.h"
#include "tilegraph/model/llama_model.h"
#include "tilegraph/model/llama_session.h"
#include "tilegraph/runtime/graph_allocator.h"
#include "tilegraph/runtime/graph_mode.h"
#include "tilegraph/runtime/reference_backend.h"
#include "tilegraph/runtime/tensor_data.h"
#include "tilegraph/tx8/tx8_backend.h"

namespace tg::tx8 {
namespace {

using compiler::ChipProgram;
using compiler::CompileOptions;
using compiler::DdrBinding;

class ReferenceProgram final : public ChipProgram {
 public:
  explicit ReferenceProgram(const Graph& graph) {
    std::map<const Tensor*, Tensor*> clones;
    auto clone = [&](const Tensor* t) {
      Tensor* c = ctx_.new_tensor(t->type, std::span<const int64_t>(t->ne, kMaxDims));
      *c = *t;
      for (Tensor*& src : c->src) {
        if (src) src = clones.at(src);
      }
      if (c->view_src) {
        c->view_src = clones.at(c->view_src);
        c->data = static_cast<char*>(c->view_src->data) + c->view_offs;
      } else if (!c->is_noop() || c->op == Op::NONE) {
        memory_.push_back(make_host_buffer(c->nbytes()));
        c->data = memory_.back()->base();
      }
      clones[t] = c;
      return c;
    };
    for (const Tensor* leaf : graph.leafs()) {
      Tensor* c = clone(leaf);
      (c->flags & kFlagParam ? weights_ : arguments_).push_back(c);
    }
    for (const Tensor* node : graph.nodes()) clone(node);
    std::vector<Tensor*> outputs;
    for (const Tensor* out : graph.outputs()) outputs.push_back(clones.at(out));
    results_ = outputs;
    graph_ = Graph::build(outputs);
    // The state written, as compile_graph's import returns it: each argument the graph writes
    // whose last write is not an output already.
    for (Tensor* argument : arguments_) {
      const Tensor* last_write = nullptr;
      for (const Tensor* node : graph_.nodes()) {
        if ((node->op == Op::SET_ROWS || node->op == Op::CPY) && node->view_src == argument) last_write = node;
      }
      if (last_write && std::find(outputs.begin(), outputs.end(), last_write) == outputs.end()) {
        results_.push_back(argument);
      }
    }
    report_.groups.resize(graph_.size());
    for (const Tensor* t : arguments_) argument_bytes_.push_back(t->nbytes());
    for (const Tensor* t : results_) result_bytes_.push_back(t->nbytes());
  }

  uint64_t scratch_bytes() const override { return 64; }
  const std::vector<uint64_t>& argument_bytes() const override { return argument_bytes_; }
  const std::vector<uint64_t>& result_bytes() const override { return result_bytes_; }

  sim::ChipReport run(sim::Chip& chip, const DdrBinding& binding) override {
    if (binding.arguments.size() != arguments_.size() || binding.results.size() != results_.size()) {
      throw Error("reference program: binding of " + std::to_string(binding.arguments.size()) + " arguments and " +
                  std::to_string(binding.results.size()) + " results for " + std::to_string(arguments_.size()) +
                  " and " + std::to_string(results_.size()));
    }
    for (size_t i = 0; i < arguments_.size(); ++i) {
      chip.ddr().read(binding.arguments[i], arguments_[i]->data, arguments_[i]->nbytes());
    }
    for (Tensor* w : weights_) {
      const uint64_t at = binding.constant(w->name);
      if (at == sim::kNoAddress) throw Error(std::string("reference program: no address for weight ") + w->name);
      chip.ddr().read(at, w->data, w->nbytes());
    }
    const uint8_t scratch[64] = {};
    chip.ddr().write(binding.scratch, scratch, sizeof scratch);
    make_reference_backend()->compute(graph_);
    for (size_t i = 0; i < results_.size(); ++i)
      chip.ddr().write(binding.results[i], results_[i]->data, results_[i]->nbytes());
    sim::ChipReport report;
    report.total_cycles = 1000 * graph_.size();
    report.seconds = double(report.total_cycles) * 1e-9;
    return report;
  }

  const compiler::CompileReport& report() const override { return report_; }
  size_t host_bytes() const override { return 1024; }

 private:
  Context ctx_{ContextOptions{.no_alloc = true}};
  std::vector<std::unique_ptr<Buffer>> memory_;
  Graph graph_;
  std::vector<Tensor*> arguments_, weights_, results_;
  std::vector<uint64_t> argument_bytes_, result_bytes_;
  compiler::CompileReport report_;
};

struct Harness {
  std::vector<std::string> notices;
  int compiles = 0;
  // Ops the stand-in chip does not run, and ops its compiler refuses.
  std::vector<Op> unsupported = {Op::GET_ROWS, Op::FLASH_ATTN_EXT};
  std::vector<Op> refused;

  std::unique_ptr<Backend> backend(bool graph_mode) {
    Tx8Options options;
    options.compiler.supports = [this](const Tensor& node, std::string* why) {
      for (Op op : unsupported) {
        if (node.op == op) {
          if (why) *why = "the stand-in chip has no " + std::string(op_name(op));
          return false;
        }
      }
      return true;
    };
    options.compiler.compile = [this](const Graph& graph, const CompileOptions&) -> std::unique_ptr<ChipProgram> {
      for (const Tensor* node : graph.nodes()) {
        for (Op op : refused) {
          if (node->op == op) throw Error("no code for " + std::string(op_name(op)));
        }
      }
      ++compiles;
      return std::make_unique<ReferenceProgram>(graph);
    };
    options.notice = [this](const std::string& line) { notices.push_back(line); };
    auto b = make_tx8_backend({.num_threads = 1}, std::move(options));
    GraphModeConfig config = GraphModeConfig{};
    config.enabled = graph_mode;
    b->graph_mode()->set_config(config);
    return b;
  }
};

Tx8Stats stats_of(Backend& b) { return dynamic_cast<Tx8Backend&>(b).stats(); }

struct Decoded {
  std::vector<int32_t> tokens;
  std::vector<float> last_logits;
};

Decoded decode(const model::LlamaModel& model, Backend& backend, int steps) {
  model::LlamaSession session(model, backend, 64);
  const std::vector<int32_t> prompt = {1, 17, 42, 7, 300};
  const model::GenerationResult r = session.generate(prompt, steps);
  const std::span<const float> logits = session.eval(std::span<const int32_t>(&r.tokens.back(), 1));
  return {r.tokens, std::vector<float>(logits.begin(), logits.end())};
}

TEST(Tx8Backend, ASessionGivesTheCpuTokensWithFallbacksNamedOnce) {
  model::LlamaModel cpu_model = model::LlamaModel::generate(model::llama_preset("tiny"), DType::F16, 5);
  model::LlamaModel tx8_model = model::LlamaModel::generate(model::llama_preset("tiny"), DType::F16, 5);
  Harness h;
  auto tx8 = h.backend(false);
  tx8_model.place_weights(*tx8);
  EXPECT_FALSE(tensor_on_host(*tx8_model.layers()[0].wq));
  auto cpu = make_backend("cpu", {.num_threads = 1});
  const Decoded a = decode(cpu_model, *cpu, 6);
  const Decoded b = decode(tx8_model, *tx8, 6);
  EXPECT_EQ(b.tokens, a.tokens);
  EXPECT_LT(test::nmse(b.last_logits, a.last_logits), 1e-9);
  const Tx8Stats s = stats_of(*tx8);
  EXPECT_EQ(s.computes, 7u);  // the prompt, 5 decode steps, the last eval
  // Per step: GET_ROWS on the CPU, then per layer a chip run up to attention and FLASH_ATTN_EXT
  // on the CPU, then the rest on the chip.
  const uint64_t layers = uint64_t(tx8_model.config().n_layer);
  EXPECT_EQ(s.cpu_runs, 7 * (1 + layers));
  EXPECT_EQ(s.chip_runs, 7 * (layers + 1));
  EXPECT_EQ(s.compiles, s.chip_runs);  // graph mode off: every compute compiles
  EXPECT_EQ(s.replayed_runs, 0u);
  EXPECT_EQ(s.simulated_cycles > 0, true);
  ASSERT_EQ(h.notices.size(), 2u);
  EXPECT_EQ(h.notices[0], "get_rows runs on the CPU backend: the stand-in chip has no get_rows");
  EXPECT_EQ(h.notices[1], "flash_attn_ext runs on the CPU backend: the stand-in chip has no flash_attn_ext");
  EXPECT_EQ(s.fallbacks.size(), 2u);
}

TEST(Tx8Backend, CaptureCompilesOnceAndDecodeStepsReplay) {
  model::LlamaModel cpu_model = model::LlamaModel::generate(model::llama_preset("tiny"), DType::F32, 6);
  model::LlamaModel tx8_model = model::LlamaModel::generate(model::llama_preset("tiny"), DType::F32, 6);
  Harness h;
  auto tx8 = h.backend(true);
  tx8_model.place_weights(*tx8);
  auto cpu = make_backend("cpu", {.num_threads = 1});
  const Decoded a = decode(cpu_model, *cpu, 8);
  const Decoded b = decode(tx8_model, *tx8, 8);
  EXPECT_EQ(b.tokens, a.tokens);
  const Tx8Stats s = stats_of(*tx8);
  const GraphModeStats g = tx8->graph_mode()->stats();
  const uint64_t runs_per_step = uint64_t(tx8_model.config().n_layer) + 1;
  // The prompt runs eagerly (prefill); the first of the eight decode steps is captured
  // (compiled), the other seven replay its programs.
  EXPECT_EQ(g.captures, 1u);
  EXPECT_EQ(g.replays, 7u);
  EXPECT_EQ(s.compiles, 2 * runs_per_step);
  EXPECT_EQ(s.replayed_runs, 7 * runs_per_step);
  EXPECT_EQ(h.compiles, int(s.compiles));
}

// A graph of the captured structure at other addresses runs the captured programs on them.
TEST(Tx8Backend, ReBindingGivesTheProgramsTheNewAddresses) {
  Harness h;
  h.unsupported = {Op::SOFT_MAX};
  auto tx8 = h.backend(false);
  test::Rng rng(9);
  Context host;
  auto build = [&](Context& ctx, Tensor** a, Tensor** b) {
    *a = ctx.new_tensor(DType::F32, {29, 6});
    *b = ctx.new_tensor(DType::F32, {29, 5});
    (*a)->flags |= kFlagInput;
    (*b)->flags |= kFlagInput;
    return scale(ctx, soft_max(ctx, add(ctx, mul_mat(ctx, *a, *b), *b == nullptr ? nullptr : mul_mat(ctx, *a, *b))),
                 0.5f);
  };
  Tensor *ha, *hb;
  Tensor* hout = build(host, &ha, &hb);
  test::fill_uniform(*ha, rng);
  test::fill_uniform(*hb, rng);
  make_reference_backend()->compute(Graph::build(hout));

  Context c1(ContextOptions{.no_alloc = true}), c2(ContextOptions{.no_alloc = true});
  Tensor *a1, *b1, *a2, *b2;
  Graph g1 = Graph::build(build(c1, &a1, &b1));
  Graph g2 = Graph::build(build(c2, &a2, &b2));
  GraphAllocator alloc1, alloc2;
  alloc1.allocate(g1, *tx8);
  std::unique_ptr<Buffer> spacer = tx8->alloc_buffer(4096);  // g2 lands elsewhere
  alloc2.allocate(g2, *tx8);
  ASSERT_NE(a1->data, a2->data);
  for (Tensor* t : {a1, a2}) tensor_set(*t, ha->data, 0, ha->nbytes());
  for (Tensor* t : {b1, b2}) tensor_set(*t, hb->data, 0, hb->nbytes());

  std::unique_ptr<CapturedGraph> captured = tx8->capture(g1);
  ASSERT_TRUE(tx8->rebind(*captured, g2));
  tx8->launch(*captured);
  const Tensor* out2 = g2.outputs()[0];
  std::vector<float> result(size_t(out2->nelements()));
  tensor_get(*out2, result.data(), 0, out2->nbytes());
  EXPECT_LT(test::nmse(result, test::read_f32(*hout)), 1e-12);
  const Tx8Stats s = stats_of(*tx8);
  EXPECT_EQ(s.compiles, 2u);  // the runs before and after SOFT_MAX, once
  EXPECT_EQ(s.replayed_runs, 2u);
  EXPECT_EQ(s.cpu_runs, 2u);
}

TEST(Tx8Backend, ARunTheCompilerRefusesRunsOnTheCpu) {
  model::LlamaModel cpu_model = model::LlamaModel::generate(model::llama_preset("tiny"), DType::F16, 7);
  model::LlamaModel tx8_model = model::LlamaModel::generate(model::llama_preset("tiny"), DType::F16, 7);
  Harness h;
  h.refused = {Op::ROPE};
  auto tx8 = h.backend(false);
  tx8_model.place_weights(*tx8);
  auto cpu = make_backend("cpu", {.num_threads = 1});
  EXPECT_EQ(decode(tx8_model, *tx8, 3).tokens, decode(cpu_model, *cpu, 3).tokens);
  const Tx8Stats s = stats_of(*tx8);
  EXPECT_GT(s.compile_failures, 0u);
  ASSERT_EQ(h.notices.size(), 3u);
  // Once per reason, however many runs it refuses.
  EXPECT_EQ(h.notices[2], "a run the compiler refused runs on the CPU backend: no code for rope");
}

TEST(Tx8Backend, RefusesTensorsOutsideItsMemory) {
  Harness h;
  auto tx8 = h.backend(false);
  Context ctx;
  Tensor* a = ctx.new_tensor(DType::F32, {4, 4});
  Tensor* out = add(ctx, a, a);
  out->data = ctx.new_tensor(DType::F32, {4, 4})->data;
  test::expect_error([&] { tx8->compute(Graph::build(out)); }, "is not in the chip's DDR");
}

// The TX8 compiler itself (compile_graph, chip_supports): a small graph of weights and inputs in
// DDR, the ops the chip runs compiled and simulated, the rest on the CPU, against the reference.
TEST(Tx8Backend, TheTx8CompilerRunsASmallGraphAsTheReferenceDoes) {
  auto tx8 = make_tx8_backend({.num_threads = 1});
  test::Rng rng(17);
  auto build = [](Context& ctx, Tensor** w, Tensor** x, Tensor** rows) {
    *w = ctx.new_tensor(DType::F32, {64, 40});
    (*w)->set_name("w");
    (*w)->flags |= kFlagParam;
    *x = ctx.new_tensor(DType::F32, {64, 3});
    (*x)->flags |= kFlagInput;
    *rows = ctx.new_tensor(DType::F32, {40, 1});
    (*rows)->flags |= kFlagInput;
    Tensor* h = unary(ctx, mul_mat(ctx, *w, rms_norm(ctx, *x, 1e-5f)), UnaryOp::SILU);
    return soft_max(ctx, add(ctx, h, *rows), nullptr, 0.5f);
  };
  Context host;
  Tensor *hw, *hx, *hr;
  Tensor* hout = build(host, &hw, &hx, &hr);
  for (Tensor* t : {hw, hx, hr}) test::fill_uniform(*t, rng);
  make_reference_backend()->compute(Graph::build(hout));

  Context weights(ContextOptions{.no_alloc = true}), ctx(ContextOptions{.no_alloc = true});
  Tensor *w, *x, *rows;
  Tensor* out = build(ctx, &w, &x, &rows);
  std::unique_ptr<Buffer> weight_buffer = tx8->alloc_buffer(w->nbytes());
  w->data = weight_buffer->base();
  tensor_set(*w, hw->data, 0, hw->nbytes());
  Graph graph = Graph::build(out);
  GraphAllocator allocator;
  allocator.allocate(graph, *tx8);
  tensor_set(*x, hx->data, 0, hx->nbytes());
  tensor_set(*rows, hr->data, 0, hr->nbytes());
  tx8->compute(graph);
  std::vector<float> result(size_t(out->nelements()));
  tensor_get(*out, result.data(), 0, out->nbytes());
  EXPECT_LT(test::nmse(result, test::read_f32(*hout)), 1e-10)
      << test::describe_difference(result, test::read_f32(*hout));
  const Tx8Stats s = stats_of(*tx8);
  EXPECT_GE(s.compiles + s.compile_failures, 1u);
  EXPECT_GT(s.chip_runs, 0u) << format_stats(s);
  EXPECT_GT(s.simulated_cycles, 0u);
}

TEST(Tx8Backend, KeepsQuantizedTypesItRunsAndConvertsTheOthersToQ8_0) {
  Harness h;
  auto tx8 = h.backend(false);
  for (DType t : {DType::F32, DType::F16, DType::BF16, DType::Q8_0}) EXPECT_EQ(tx8->weight_type(t), t);
  for (DType t : {DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::Q4_K, DType::Q5_K, DType::Q6_K}) {
    EXPECT_EQ(tx8->weight_type(t), DType::Q8_0) << dtype_name(t);
  }
  EXPECT_FALSE(tx8->host_buffers());
}

}  // namespace
}  // namespace tg::tx8
