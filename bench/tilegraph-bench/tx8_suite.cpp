// `tilegraph-bench tx8`: the TX8 compiler's output measured on the C-model, in simulated cycles
// (one run each: the simulation is deterministic), against the bound of what is simulated:
//   gemm    a 4096 x 4096 x 4096 bf16 GEMM compiled for the 16 tiles, against the NE peak
//           (2 M N K flops at the tiles' bf16 rate);
//   decode  a llama decode step at d_model 2048 (2 layers of the 8-layer shape the CPU benchmarks
//           use, f16 weights), against the DDR bound (every byte the step must read or write at
//           the DDR bandwidth);
//   search  the 32-layer llama decode graph (d_model 512) compiled: host seconds of the sharding
//           search (identical layers share one searched plan) and of the whole compile;
//   spm     every group compiled above: SPM peak against the live-bytes lower bound;
//   estimate the cost model against the simulated cycles, median over the groups.
// `--only <section>`, `--json` one JSON object.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "suites.h"
#include "targets.h"
#include "tilegraph/compiler/chip_program.h"
#include "tilegraph/core/context.h"
#include "tilegraph/core/error.h"
#include "tilegraph/core/ops.h"
#include "tilegraph/model/llama_config.h"
#include "tilegraph/model/llama_model.h"
#include "tilegraph/model/llama_session.h"
#include "tilegraph/model/transformer_block.h"
#include "tilegraph/sim/chip.h"
#include "tilegraph/tx8/chip_runs.h"

namespace tg::bench {

namespace {

using nlohmann::json;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

struct Compiled {
  compiler::CompileReport report;
  std::vector<std::string> host_ops;
  sim::ChipReport simulated;
  double compile_seconds = 0;
};

// The graph's chip runs compiled and run once (tx8::compile_and_run_chip_runs), timed.
Compiled compile_and_run(const Graph& graph, const sim::ChipConfig& chip_config) {
  Compiled c;
  compiler::CompileOptions options;
  options.chip = chip_config;
  sim::Chip chip(chip_config);
  const auto t0 = std::chrono::steady_clock::now();
  tx8::ChipRunsReport runs = tx8::compile_and_run_chip_runs(graph, options, chip);
  c.compile_seconds = seconds_since(t0);
  c.report = std::move(runs.compile);
  c.host_ops = std::move(runs.host_ops);
  c.simulated = chip.report();
  return c;
}

std::string joined(const std::vector<std::string>& items) {
  std::string s;
  for (const std::string& item : items) s += (s.empty() ? "" : ", ") + item;
  return s.empty() ? "none" : s;
}

// The decode step of a generated llama model, as `tilegraph run` builds it, at position `n_past`.
struct DecodeGraph {
  explicit DecodeGraph(model::LlamaModel model) : llama(std::move(model)) {}
  model::LlamaModel llama;
  Context cache_ctx;
  std::vector<model::KvCache> caches;
  Context graph_ctx{ContextOptions{.no_alloc = true}};
  Graph graph;
  uint64_t weight_bytes = 0;  // the weights' bytes the step reads
  uint64_t cache_bytes_read = 0;
};

std::unique_ptr<DecodeGraph> decode_graph(const model::LlamaConfig& config, DType weights, int64_t n_past) {
  auto d = std::make_unique<DecodeGraph>(model::LlamaModel::generate(config, weights, 1));
  const int64_t n_kv = (n_past + 1 + model::kKvPadding - 1) / model::kKvPadding * model::kKvPadding;
  const model::BlockConfig block = config.block_config(n_kv, weights, DType::F16);
  for (int64_t l = 0; l < config.n_layer; ++l) d->caches.push_back(model::make_kv_cache(d->cache_ctx, block));
  const model::LlamaStep step = model::build_llama_step(d->graph_ctx, d->llama, block, d->caches, 1, n_kv, false);
  d->graph = Graph::build(step.logits);
  // A weight only gathered from (the token embeddings) is read one row per token; any other
  // reader reads it whole.
  for (const Tensor* leaf : d->graph.leafs()) {
    if (!(leaf->flags & kFlagParam)) continue;
    uint64_t gathered = 0;
    bool whole = false;
    for (const Tensor* node : d->graph.nodes()) {
      for (const Tensor* src : node->src) {
        if (src != leaf) continue;
        if (node->op == Op::GET_ROWS && node->src[0] == leaf) {
          gathered += uint64_t(node->src[1]->nelements()) * leaf->nb[1];
        } else {
          whole = true;
        }
      }
    }
    d->weight_bytes += whole ? leaf->nbytes() : std::min<uint64_t>(gathered, leaf->nbytes());
  }
  // Every layer reads its K and V rows up to the padded span (f16).
  d->cache_bytes_read =
      uint64_t(config.n_layer) * 2 * uint64_t(n_kv) * uint64_t(config.n_head_kv) * uint64_t(config.head_dim()) * 2;
  return d;
}

model::LlamaConfig llama_2048(int64_t layers) {
  model::LlamaConfig c = model::llama_preset("d2048");
  c.n_layer = layers;
  c.validate();
  return c;
}

void add_groups(json& spm_rows, std::vector<double>& errors, const std::string& workload,
                const compiler::CompileReport& report) {
  for (const compiler::GroupReport& g : report.groups) {
    spm_rows.push_back({{"workload", workload},
                        {"group", g.group_id},
                        {"ops", g.ops},
                        {"spm_peak", g.spm_peak},
                        {"spm_lower_bound", g.spm_lower_bound},
                        {"ratio", g.spm_lower_bound ? double(g.spm_peak) / double(g.spm_lower_bound) : 0.0},
                        {"tiles", g.tiles},
                        {"steps", g.steps},
                        {"estimated_cycles", g.estimated_cycles},
                        {"simulated_cycles", g.simulated_cycles}});
    if (g.simulated_cycles > 0) {
      errors.push_back(std::abs(double(g.estimated_cycles) - double(g.simulated_cycles)) / double(g.simulated_cycles));
    }
  }
}

struct Tx8Options {
  std::string only;
  bool json = false;
};

void run_tx8_suite(const Tx8Options& o) {
  const bool all = o.only.empty();
  const sim::ChipConfig chip;
  json out;
  std::vector<Target> targets;
  json spm_rows = json::array();
  std::vector<double> errors;

  if (all || o.only == "gemm") {
    constexpr int64_t n = 4096;
    Context ctx;
    Tensor* w = ctx.new_tensor(DType::BF16, {n, n});
    Tensor* x = ctx.new_tensor(DType::BF16, {n, n});
    w->flags |= kFlagParam;
    Tensor* y = mul_mat(ctx, w, x);
    const Graph graph = Graph::build(y);
    const Compiled c = compile_and_run(graph, chip);
    if (!c.host_ops.empty()) std::printf("gemm: on the CPU, not the chip: %s\n", joined(c.host_ops).c_str());
    const double flops = 2.0 * double(n) * double(n) * double(n);
    const double peak_per_cycle =
        double(chip.tile_count()) * chip.ne.arrays_per_tile * 2048.0 / chip.ne_cycles_per_step(sim::Format::BF16);
    const double bound = flops / peak_per_cycle;
    const double fraction = bound / double(c.simulated.total_cycles);
    // What bounds it: the busiest NE, and the DDR bytes at the DDR's rate.
    uint64_t ne_busy = 0;
    for (const sim::TileReport& t : c.simulated.tiles) {
      ne_busy = std::max(ne_busy, t.engines[int(sim::Engine::NE)].busy_cycles);
    }
    const uint64_t ddr_bytes = c.simulated.ddr_read_bytes + c.simulated.ddr_write_bytes;
    const double ddr_bound = double(ddr_bytes) / chip.ddr.bytes_per_cycle;
    std::string plan;
    for (const compiler::GroupReport& g : c.report.groups) {
      if (g.ops != "matmul") continue;
      plan = std::to_string(g.steps) + " steps";
      if (g.k_panel > 0) {
        plan += ", K in panels of " + std::to_string(g.k_panel) + (g.noc_share ? " shared over the NoC" : "");
      }
    }
    out["gemm"] = {{"m", n},
                   {"n", n},
                   {"k", n},
                   {"simulated_cycles", c.simulated.total_cycles},
                   {"ne_bound_cycles", bound},
                   {"fraction_of_ne_peak", fraction},
                   {"ne_busy_cycles", ne_busy},
                   {"ddr_bytes", ddr_bytes},
                   {"ddr_bound_cycles", ddr_bound},
                   {"noc_bytes", c.simulated.noc_bytes},
                   {"hazards", c.simulated.hazard_count},
                   {"plan", plan},
                   {"compile_seconds", c.compile_seconds}};
    if (!o.json) {
      std::printf("gemm 4096^3 bf16, 16 tiles: %llu cycles, NE bound %.0f: %.1f%% of peak (compiled in %.1f s)\n",
                  (unsigned long long)c.simulated.total_cycles, bound, 100 * fraction, c.compile_seconds);
      std::printf("  %s; NE busy %llu, DDR %.1f MiB (bound %.0f), NoC %.1f MiB, %llu hazards\n", plan.c_str(),
                  (unsigned long long)ne_busy, double(ddr_bytes) / (1 << 20), ddr_bound,
                  double(c.simulated.noc_bytes) / (1 << 20), (unsigned long long)c.simulated.hazard_count);
    }
    targets.push_back({"4096^3 bf16 GEMM >= 80% of NE peak", fmt("%.1f%%", 100 * fraction), fraction >= 0.8});
    add_groups(spm_rows, errors, "gemm", c.report);
  }

  if (all || o.only == "decode") {
    const model::LlamaConfig config = llama_2048(2);
    const std::unique_ptr<DecodeGraph> d = decode_graph(config, DType::F16, 63);
    const Compiled c = compile_and_run(d->graph, chip);
    // The matmuls alone (M = 1: weight-bound): the chip's cycles in their groups against their
    // weights' bytes at the DDR bandwidth.
    uint64_t matmul_bytes = 0, matmul_cycles = 0;
    for (const Tensor* node : d->graph.nodes()) {
      if (node->op == Op::MUL_MAT) matmul_bytes += node->src[0]->nbytes();
    }
    for (const compiler::GroupReport& g : c.report.groups) {
      if (g.ops.find("matmul") != std::string::npos) matmul_cycles += g.simulated_cycles;
    }
    const double matmul_fraction =
        matmul_cycles ? double(matmul_bytes) / chip.ddr.bytes_per_cycle / double(matmul_cycles) : 0.0;
    const double bytes = double(d->weight_bytes + d->cache_bytes_read);
    const double bound = bytes / chip.ddr.bytes_per_cycle;
    const double fraction = bound / double(c.simulated.total_cycles);
    out["decode"] = {{"n_embd", config.n_embd},
                     {"n_layer", config.n_layer},
                     {"weight_bytes", d->weight_bytes},
                     {"simulated_cycles", c.simulated.total_cycles},
                     {"ddr_bound_cycles", bound},
                     {"fraction_of_ddr_bound", fraction},
                     {"simulated_seconds", c.simulated.seconds},
                     {"compile_seconds", c.compile_seconds},
                     {"host_ops", c.host_ops},
                     {"matmul_weight_bytes", matmul_bytes},
                     {"matmul_simulated_cycles", matmul_cycles},
                     {"matmul_fraction_of_ddr_bound", matmul_fraction}};
    if (!o.json) {
      std::printf("decode: on the CPU, not the chip (not in the simulated cycles): %s\n", joined(c.host_ops).c_str());
      if (c.host_ops.empty()) {
        std::printf("decode d_model 2048, %lld layers, f16: %llu cycles (%.3f ms), DDR bound %.0f: %.1f%% of it\n",
                    (long long)config.n_layer, (unsigned long long)c.simulated.total_cycles, 1e3 * c.simulated.seconds,
                    bound, 100 * fraction);
      } else {
        std::printf("decode d_model 2048, %lld layers, f16: the chip's share %llu cycles (%.3f ms)\n",
                    (long long)config.n_layer, (unsigned long long)c.simulated.total_cycles, 1e3 * c.simulated.seconds);
      }
    }
    if (!o.json) {
      std::printf(
          "decode matmuls (M = 1, %.1f MB of weights): %llu cycles in their groups, DDR bound %.0f: %.1f%% of it\n",
          1e-6 * double(matmul_bytes), (unsigned long long)matmul_cycles,
          double(matmul_bytes) / chip.ddr.bytes_per_cycle, 100 * matmul_fraction);
    }
    targets.push_back(
        {"decode matmuls >= 80% of DDR bound", fmt("%.1f%%", 100 * matmul_fraction), matmul_fraction >= 0.8});
    // With nodes on the CPU the chip's cycles leave out their work: no fraction of the bound then.
    if (c.host_ops.empty()) {
      targets.push_back({"llama decode d2048 >= 80% of DDR bound", fmt("%.1f%%", 100 * fraction), fraction >= 0.8});
    } else {
      targets.push_back(
          {"llama decode d2048 >= 80% of DDR bound", "not on the chip whole: " + joined(c.host_ops), false});
    }
    add_groups(spm_rows, errors, "decode", c.report);
  }

  if (all || o.only == "search") {
    model::LlamaConfig config = llama_2048(32);
    config.n_embd = 512;
    config.n_head = 8;
    config.n_head_kv = 4;
    config.n_ff = 1408;
    const std::unique_ptr<DecodeGraph> d = decode_graph(config, DType::F16, 0);
    const Compiled c = compile_and_run(d->graph, chip);
    const double seconds = c.compile_seconds;
    const double search = c.report.search_seconds;
    // The chip runs share one plan memo: a group identical to one of an earlier run is not searched.
    const compiler::GroupCostCounts& counts = c.report.search;
    const size_t reused = size_t(counts.reused);
    out["search"] = {{"n_layer", config.n_layer},
                     {"groups", c.report.groups.size()},
                     {"groups_searched", counts.searched},
                     {"groups_reusing_a_plan", counts.reused},
                     {"of_which_from_an_earlier_run", counts.earlier},
                     {"search_seconds", search},
                     {"compile_seconds", seconds}};
    if (!o.json) {
      std::printf(
          "32-layer llama decode graph: sharding search %.2f s host (whole compile %.2f s, JIT included), "
          "%zu groups, %lld searched, %zu reuse a searched plan (%lld of an earlier chip run)\n",
          search, seconds, c.report.groups.size(), (long long)counts.searched, reused, (long long)counts.earlier);
    }
    targets.push_back({"32-layer llama sharding search <= 2 s host", fmt("%.2f s", search), search <= 2.0});
  }

  if (!spm_rows.empty()) {
    double worst = 0;
    for (const json& row : spm_rows) worst = std::max(worst, row["ratio"].get<double>());
    out["spm"] = spm_rows;
    targets.push_back({"SPM peak <= 1.05x live bound, every group", fmt("worst %.3fx", worst), worst <= 1.05});
    if (!o.json) std::printf("SPM peak / live-bytes bound: worst %.3f over %zu groups\n", worst, spm_rows.size());
  }
  if (!errors.empty()) {
    std::sort(errors.begin(), errors.end());
    const double median = errors[errors.size() / 2];
    out["estimate_median_error"] = median;
    targets.push_back({"estimate within 10% of simulated, median", fmt("%.1f%%", 100 * median), median <= 0.10});
    if (!o.json)
      std::printf("estimate vs simulated cycles: median |error| %.1f%% over %zu groups\n", 100 * median, errors.size());
  }
  if (o.json) {
    out["targets"] = targets_json(targets);
    std::printf("%s\n", out.dump(2).c_str());
  } else {
    print_targets(targets);
  }
}

}  // namespace

void add_tx8_suite(CLI::App& app) {
  auto o = std::make_shared<Tx8Options>();
  auto* cmd = app.add_subcommand("tx8",
                                 "The TX8 compiler's programs on the C-model: GEMM and decode against their "
                                 "bounds, compile time, SPM allocation and the cost model's error");
  cmd->add_option("--only", o->only, "Run one section")->check(CLI::IsMember({"gemm", "decode", "search"}));
  cmd->add_flag("--json", o->json, "Print one JSON object");
  cmd->callback([o] { run_tx8_suite(*o); });
}

}  // namespace tg::bench
