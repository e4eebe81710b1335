// `tilegraph compile`: compiles a llama step's graph (the graph `tilegraph run` computes for a
// prefill or a decode step) for the TX8 chip and prints the imported tx8be module (--emit mlir),
// or compiles it, runs it once on the C-model and reports per group the plan, the SPM map and
// estimated against simulated cycles (--emit report|json|html, --report, --trace)
// (docs/compiler.md). Built only with the compiler (TG_BUILD_COMPILER), into tilegraph-compile,
// which `tilegraph compile` runs.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <llvm/Support/raw_ostream.h>
#include <mlir/IR/MLIRContext.h>

#include <unistd.h>

#include <chrono>

#include "commands.h"
#include "common/cli_checks.h"
#include "compile_report.h"
#include "model_source.h"
#include "tilegraph/compiler/chip_program.h"
#include "tilegraph/compiler/graph_import.h"
#include "tilegraph/compiler/registration.h"
#include "tilegraph/core/error.h"
#include "tilegraph/model/llama_session.h"
#include "tilegraph/sim/trace.h"
#include "tilegraph/tx8/chip_runs.h"

namespace tg::cli {

namespace {

struct CompileOptions {
  std::optional<std::string> model;  // none: the embedded default
  std::string emit = "mlir";
  std::string step = "decode";
  int64_t tokens = 8;  // prefill tokens
  int64_t n_past = 0;
  int64_t inline_limit = 16 * 1024;
  std::optional<std::string> output;
  bool no_mmap = false;
  std::optional<std::string> config;  // chip configuration JSON
  std::optional<std::string> trace;
  std::optional<std::string> patterns;
  bool report = false;
};

void write_output(const std::optional<std::string>& path, const std::string& text) {
  if (path) {
    std::ofstream file(*path, std::ios::binary);
    file << text;
    if (!file.flush()) throw Error("-o: cannot write '" + *path + "'");
  } else {
    std::fwrite(text.data(), 1, text.size(), stdout);
  }
}

// The compile's progress on stderr, only when it is a terminal, at most ten times a second.
class ProgressLine {
 public:
  ProgressLine() : enabled_(isatty(STDERR_FILENO) != 0) {}
  void operator()(const compiler::CompileProgress& p) {
    if (!enabled_) return;
    const auto now = std::chrono::steady_clock::now();
    if (p.stage == last_stage_ && p.done < p.total && now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    last_stage_ = std::string(p.stage);
    std::fprintf(stderr, "\r  %s", last_stage_.c_str());
    if (p.total > 0) std::fprintf(stderr, " %zu/%zu", p.done, p.total);
    std::fputs("\x1b[K", stderr);
    std::fflush(stderr);
    shown_ = true;
  }
  ~ProgressLine() {
    if (shown_) std::fprintf(stderr, "\r\x1b[K");
  }

 private:
  bool enabled_;
  bool shown_ = false;
  std::string last_stage_;
  std::chrono::steady_clock::time_point last_{};
};

// Compiles `graph` for the chip, runs it once with zero arguments on the C-model and collects
// what the report shows.
void compile_and_simulate(const CompileOptions& o, const Graph& graph, const std::string& title) {
  CompileRun run;
  run.title = title;
  run.chip = o.config ? sim::load_chip_config(*o.config) : sim::ChipConfig{};
  ProgressLine progress;
  compiler::CompileOptions options;
  options.chip = run.chip;
  if (o.patterns) options.group_patterns_file = *o.patterns;
  options.progress = [&progress](const compiler::CompileProgress& p) { progress(p); };
  // As the tx8 backend cuts it: the runs of nodes the chip supports compiled and run, the nodes
  // between them listed as the CPU's.
  sim::Chip chip(run.chip);
  tx8::ChipRunsReport runs = tx8::compile_and_run_chip_runs(graph, options, chip);
  run.compile = std::move(runs.compile);
  run.host_ops = std::move(runs.host_ops);
  run.simulated = chip.report();
  run.timeline = chip.timeline();
  if (o.trace) sim::write_trace(chip, *o.trace);

  std::string emitted;
  if (o.emit == "report") emitted = report_text(run);
  if (o.emit == "json") emitted = report_json(run).dump(2) + "\n";
  if (o.emit == "html") emitted = report_html(run);
  write_output(o.output, emitted);
  if (o.report && o.emit != "report") {
    // Beside an artifact on stdout the report goes to stderr, so that a redirect keeps either whole.
    const std::string text = report_text(run);
    std::fwrite(text.data(), 1, text.size(), o.output ? stdout : stderr);
  }
}

void run_compile(const CompileOptions& o) {
  const ModelSource m = ModelSource::open(o.model, !o.no_mmap);
  const model::LlamaConfig& c = m.config;
  const int64_t n_tokens = o.step == "decode" ? 1 : o.tokens;
  const int64_t needed = o.n_past + n_tokens;
  if (needed > c.n_ctx_train) {
    throw Error("--n-past " + std::to_string(o.n_past) + " + " + std::to_string(n_tokens) +
                " tokens exceed the model's context length " + std::to_string(c.n_ctx_train));
  }
  // The session's cache length and attention span for this step (llama_session.cpp).
  const auto round_up = [](int64_t n) { return (n + model::kKvPadding - 1) / model::kKvPadding * model::kKvPadding; };
  const int64_t n_ctx = std::min(c.n_ctx_train, round_up(needed));
  const int64_t n_kv = std::min(round_up(needed), n_ctx);
  const model::LlamaModel llama = m.load();
  model::BlockConfig block = c.block_config(n_ctx, llama.weight_type(), DType::F16);
  block.wv_type = llama.layers().front().wv->type;
  block.w_down_type = llama.layers().front().w_down->type;
  Context cache_ctx;
  std::vector<model::KvCache> caches;
  for (int64_t l = 0; l < c.n_layer; ++l) caches.push_back(model::make_kv_cache(cache_ctx, block));
  Context graph_ctx(ContextOptions{.no_alloc = true});
  const model::LlamaStep step = model::build_llama_step(graph_ctx, llama, block, caches, n_tokens, n_kv, false);
  const Graph graph = Graph::build(step.logits);

  const std::string title = m.description + ": " + o.step + " step, " + std::to_string(n_tokens) +
                            " token(s) at position " + std::to_string(o.n_past);
  if (o.emit != "mlir" || o.report || o.trace) {
    if (o.emit == "mlir") throw Error("--report and --trace run the compiled program: use --emit report, json or html");
    compile_and_simulate(o, graph, title);
    return;
  }

  mlir::DialectRegistry registry;
  compiler::register_dialects(registry);
  mlir::MLIRContext context(registry);
  compiler::ImportOptions options;
  options.inline_limit_bytes = size_t(o.inline_limit);
  compiler::ImportedGraph imported = compiler::import_graph(context, graph, options);

  std::string text;
  llvm::raw_string_ostream stream(text);
  stream << "// " << title << ", " << graph.size() << " core nodes; " << imported.constants.size()
         << " weights held outside the IR as #tx8be.external\n";
  imported.module->print(stream);
  stream.flush();
  write_output(o.output, text);
}

}  // namespace

void add_compile_command(CLI::App& app) {
  auto o = std::make_shared<CompileOptions>();
  auto* cmd = app.add_subcommand(
      "compile",
      "Compile a llama step's graph for the TX8 chip: print its tx8be module, or run it on the C-model and report");
  cmd->add_option("--model", o->model, "GGUF file of a llama or qwen2 model (default: the embedded small model)");
  cmd->add_option("--emit", o->emit,
                  "What to print: mlir (the imported tx8be module), or compile the graph, run it once on the "
                  "C-model and print report (per group: sharding, steps, SPM peak against the live-bytes bound, "
                  "estimated against simulated cycles; engine utilisation), json (the same as data) or html (a "
                  "self-contained page with the SPM occupancy and the engine timeline)")
      ->check(CLI::IsMember({"mlir", "report", "json", "html"}))
      ->capture_default_str();
  cmd->add_option("--step", o->step, "The step whose graph is compiled: decode (one token) or prefill (--tokens)")
      ->check(CLI::IsMember({"decode", "prefill"}))
      ->capture_default_str();
  cmd->add_option("--tokens", o->tokens, "Prompt tokens of a prefill step")
      ->check(integer_in<int64_t>(1, int64_t(1) << 20))
      ->capture_default_str();
  cmd->add_option("--n-past", o->n_past, "Positions already in the KV cache")
      ->check(integer_in<int64_t>(0, int64_t(1) << 24))
      ->capture_default_str();
  cmd->add_option("--inline-limit", o->inline_limit,
                  "Weights of at most this many bytes are printed in the IR; larger and quantized ones as "
                  "#tx8be.external references")
      ->check(integer_in<int64_t>(0, int64_t(1) << 40))
      ->capture_default_str();
  cmd->add_option("-o,--output", o->output, "Write the module to this file instead of stdout");
  cmd->add_flag("--no-mmap", o->no_mmap, "Read the model file into memory instead of mapping it");
  cmd->add_option("--config", o->config,
                  "Chip configuration JSON (docs/sim.md, \"Configuration\"; default: the TX8 chip's 4x4 tiles)");
  cmd->add_option("--group-patterns", o->patterns, "A file of extra op-grouping patterns (docs/compiler.md)");
  cmd->add_option("--trace", o->trace, "Write the simulated run as a Chrome/Perfetto trace to this file");
  cmd->add_flag("--report", o->report,
                "Also print the per-group report (to stderr when the emitted output goes to stdout)");
  cmd->callback([o] { run_compile(*o); });
}

}  // namespace tg::cli
