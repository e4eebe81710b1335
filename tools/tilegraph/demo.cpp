// `tilegraph demo`: one llama-style block run for a short prefill and a few decode steps on a
// backend, each step checked against the reference backend. The model issue replaces this with
// `tilegraph run` on a whole model.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "common/cli_checks.h"
#include "tilegraph/backends.h"
#include "tilegraph/core/error.h"
#include "tilegraph/model/random_weights.h"
#include "tilegraph/model/transformer_block.h"
#include "tilegraph/runtime/graph_allocator.h"
#include "tilegraph/runtime/graph_mode.h"

namespace tg::cli {

namespace {

struct DemoOptions {
  std::string backend = "cpu";
  int threads = 0;
  int64_t n_embd = 256;
  int prefill = 8;
  int steps = 16;
  std::string graph_mode;  // "on", "off" or empty for $TG_GRAPH_MODE
};

// Attention spans the cache rounded up to this many rows (the mask hides the unused ones), so
// consecutive decode steps build graphs of the same structure that graph mode can replay.
constexpr int64_t kKvPadding = 32;

int64_t round_up(int64_t n, int64_t to) { return (n + to - 1) / to * to; }

// One backend running the block over the same sequence of steps, with its own weights and KV
// cache (same seed, so the two runs start identical).
struct Runner {
  std::unique_ptr<Backend> backend;
  Context weights_ctx;
  model::BlockWeights weights;
  model::KvCache cache;
  GraphAllocator allocator;
  double seconds = 0;

  Runner(const std::string& name, const BackendOptions& options, const model::BlockConfig& config)
      : backend(make_backend(name, options)),
        weights(model::make_block_weights(weights_ctx, config, 42)),
        cache(model::make_kv_cache(weights_ctx, config)) {}

  // Runs tokens [n_past, n_past + n_tokens) and returns the block output.
  std::vector<float> step(const model::BlockConfig& config, int64_t n_past, int64_t n_tokens, size_t* nodes,
                          size_t* peak, size_t* unshared) {
    Context ctx({.no_alloc = true});
    const int64_t n_kv = std::min(round_up(n_past + n_tokens, kKvPadding), config.n_ctx);
    model::StepInputs in = model::make_step_inputs(ctx, config, n_tokens, n_kv);
    Tensor* out = model::build_block(ctx, config, weights, cache, in, n_kv);
    Graph graph = Graph::build(out);
    const AllocationPlan& plan = allocator.allocate(graph, *backend);
    model::fill_uniform(*in.x, 1000 + uint64_t(n_past), 1.0f);
    model::fill_step_inputs(in, n_past);
    const auto start = std::chrono::steady_clock::now();
    backend->compute(graph);
    backend->synchronize();
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    *nodes = graph.size();
    *peak = plan.peak_bytes;
    *unshared = plan.unshared_bytes;
    const float* data = static_cast<const float*>(out->data);
    return std::vector<float>(data, data + out->nelements());
  }
};

double nmse(const std::vector<float>& out, const std::vector<float>& ref) {
  double err = 0, norm = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    err += (double(out[i]) - ref[i]) * (double(out[i]) - ref[i]);
    norm += double(ref[i]) * ref[i];
  }
  return norm > 0 ? err / norm : err;
}

int run_demo(const DemoOptions& o) {
  model::BlockConfig config;
  config.n_embd = o.n_embd;
  config.n_ff = (o.n_embd * 8 / 3 + 31) / 32 * 32;
  config.n_ctx = round_up(o.prefill + o.steps, kKvPadding);
  const BackendOptions options{.num_threads = o.threads};

  Runner fast(o.backend, options, config);
  GraphMode* graph_mode = fast.backend->graph_mode();
  if (graph_mode && !o.graph_mode.empty()) {
    GraphModeConfig c = graph_mode->config();
    c.enabled = o.graph_mode == "on";
    graph_mode->set_config(c);
  }
  Runner reference("reference", options, config);
  std::printf(
      "tilegraph demo: one llama-style block (n_embd %lld, %lld heads / %lld kv heads, n_ff %lld,"
      " %s weights, %s KV cache)\n",
      (long long)config.n_embd, (long long)config.n_head, (long long)config.n_head_kv, (long long)config.n_ff,
      std::string(dtype_name(config.weight_type)).c_str(), std::string(dtype_name(config.cache_type)).c_str());

  double worst = 0;
  size_t nodes = 0, peak = 0, unshared = 0;
  int64_t n_past = 0;
  for (int s = 0; s <= o.steps; ++s) {
    const int64_t n_tokens = s == 0 ? o.prefill : 1;
    if (n_tokens == 0) continue;
    const std::vector<float> out = fast.step(config, n_past, n_tokens, &nodes, &peak, &unshared);
    const std::vector<float> ref = reference.step(config, n_past, n_tokens, &nodes, &peak, &unshared);
    worst = std::max(worst, nmse(out, ref));
    n_past += n_tokens;
  }
  constexpr double kBound = 1e-5;  // f16 KV cache rounding dominates
  const bool ok = std::isfinite(worst) && worst <= kBound;
  // `nodes` is the last step's: a decode step's, or the prefill's when there is none.
  std::printf("  graph: %zu nodes per %s step; allocator: %.1f KiB of intermediates in %.1f KiB\n", nodes,
              o.steps > 0 ? "decode" : "prefill", unshared / 1024.0, peak / 1024.0);
  std::printf("  ran a %d-token prefill and %d decode step%s on '%s' and on 'reference'\n", o.prefill, o.steps,
              o.steps == 1 ? "" : "s", o.backend.c_str());
  std::printf("  worst NMSE against the reference: %.3g (bound %.0e)  %s\n", worst, kBound, ok ? "OK" : "MISMATCH");
  std::printf("  total compute time: %s %.2f ms, reference %.2f ms\n", o.backend.c_str(), fast.seconds * 1e3,
              reference.seconds * 1e3);
  if (graph_mode) {
    std::printf("  graph mode %s: %s\n", graph_mode->config().enabled ? "on" : "off",
                format_stats(graph_mode->stats()).c_str());
  }
  return ok ? 0 : 1;
}

}  // namespace

void add_demo_command(CLI::App& app) {
  auto options = std::make_shared<DemoOptions>();
  auto* cmd = app.add_subcommand("demo", "Run one transformer block on a backend and check it against the reference");
  cmd->add_option("--backend", options->backend, "Backend to run (cpu, reference)")->capture_default_str();
  cmd->add_option("--threads", options->threads, "Worker threads (0: $TG_NUM_THREADS or all cores)")
      ->check(tg::cli::integer_in(0, kMaxThreads))
      ->capture_default_str();
  cmd->add_option("--n-embd", options->n_embd, "Model width (a multiple of 16: 8 heads of an even size)")
      ->check(tg::cli::integer_in<int64_t>(16, 8192))
      ->capture_default_str();
  cmd->add_option("--prefill", options->prefill, "Prompt tokens processed in the first step")
      ->check(tg::cli::integer_in(1, 512))
      ->capture_default_str();
  cmd->add_option("--steps", options->steps, "Decode steps after the prefill")
      ->check(tg::cli::integer_in(0, 4096))
      ->capture_default_str();
  cmd->add_option("--graph-mode", options->graph_mode,
                  "Capture and replay decode steps: on or off (default: $TG_GRAPH_MODE, else on)")
      ->check(CLI::IsMember({"on", "off"}));
  cmd->callback([options] {
    if (options->n_embd % 16 != 0) throw Error("--n-embd must be a multiple of 16 (8 heads of an even size, for RoPE)");
    const int rc = run_demo(*options);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace tg::cli
