// `tilegraph-bench model`: decode speed of whole llama models (model::LlamaSession, the loop
// `tilegraph run` uses), eager against graph mode, each figure against a peer in the same run:
//   - the tiny preset (d_model 128, 2 layers), where per-node dispatch dominates: graph / eager;
//   - a larger model (d_model 2048, 2 layers, vocabulary 4096), bandwidth-bound: the decode step
//     against the memory-bandwidth bound (weight bytes per token / read bandwidth measured here).
// Weights f16 and q8_0 (--types chooses others), 1 and 2 threads. A step is one session.eval of one token plus the
// greedy pick, in two ways: "rebuild" builds and allocates the step's graph every time, "reuse" (the session's default,
// what `tilegraph run` does) reuses the previous step's graph and refills its inputs. Positions cycle through 32..63
// (the session is truncated back to 32), so every step attends over n_kv = 64 rows and has the same shape. Prefill, for
// the larger model: a 256-token prompt from an empty cache, against the f32 weights of the same model (the float GEMM)
// in the same rounds. The llama.cpp section (model_llama_cpp.h): an 8-layer d_model-2048 model against llama.cpp on
// the same GGUF file, decode and prefill.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "bandwidth.h"
#include "common/cli_checks.h"
#include "measure.h"
#include "model_llama_cpp.h"
#include "model_steps.h"
#include "suites.h"
#include "targets.h"
#include "tilegraph/backends.h"
#include "tilegraph/model/llama_model.h"
#include "tilegraph/model/llama_session.h"
#include "tilegraph/runtime/graph_mode.h"

namespace tg::bench {

namespace {

using nlohmann::json;

constexpr uint64_t kSeed = 42;
// The longest prompt --prefill-tokens takes (the d2048 model's context length).
constexpr int64_t kMaxPrefillTokens = 4096;

struct ModelSpec {
  std::string name;
  model::LlamaConfig config;
  bool big;  // tens of ms a step: fewer, longer rounds
};

std::vector<ModelSpec> model_specs() {
  model::LlamaConfig large = model::llama_preset("tiny");
  large.n_embd = 2048;
  large.n_head = 32;
  large.n_head_kv = 8;
  large.n_ff = 5632;
  large.n_layer = 2;
  large.n_vocab = 4096;
  large.n_ctx_train = kMaxPrefillTokens;
  return {{"tiny", model::llama_preset("tiny"), false}, {"d2048", large, true}};
}

struct PrefillRow {
  std::string model, type;
  int threads;
  double tokens_per_s, f32_tokens_per_s;  // medians over the rounds
  double ratio;                           // median of the rounds' f32 time / this type's time
};

PrefillRow prefill_one(const ModelSpec& spec, const model::LlamaModel& llama, const model::LlamaModel& f32, DType type,
                       int threads, int64_t tokens) {
  auto backend = cpu_backend(threads, false);
  auto f32_backend = cpu_backend(threads, false);
  Prefiller ours(llama, *backend, tokens), peer(f32, *f32_backend, tokens);
  ours.run();  // allocator and scratch at full size
  peer.run();
  const std::string tag = spec.name + "/prefill/" + std::string(dtype_name(type)) + "/" + std::to_string(threads) + "t";
  const auto times = measure_rounds(tag, {[&] { ours.run(); }, [&] { peer.run(); }}, 5, 0.2);
  return {spec.name,
          std::string(dtype_name(type)),
          threads,
          double(tokens) / median_of(times[0]),
          double(tokens) / median_of(times[1]),
          median_ratio(times[1], times[0])};
}

// One way of stepping (rebuild or reuse): eager and graph mode.
struct Pair {
  double eager_s, graph_s;  // per decode step, medians
  double ratio;             // eager / graph, median of the rounds
  double graph_hit_rate;
  double bound_eff;  // median over the rounds of that round's bound / graph step
};

struct Row {
  std::string model;
  std::string type;
  int threads;
  size_t nodes;
  double weight_mib;
  Pair rebuild, reuse;
  double bandwidth;  // bytes/s, median of one run before each round
  double bound_s;    // decode weight bytes / bandwidth
};

Row run_one(const ModelSpec& spec, const model::LlamaModel& llama, DType type, int threads,
            const ReadBandwidth& bandwidth) {
  // Backends: [eager rebuild, graph rebuild, eager reuse, graph reuse], each with its decoder.
  std::vector<std::unique_ptr<Backend>> backends;
  std::vector<std::unique_ptr<Decoder>> decoders;
  for (const bool reuse : {false, true}) {
    for (const bool graph : {false, true}) {
      backends.push_back(cpu_backend(threads, graph));
      decoders.push_back(std::make_unique<Decoder>(llama, *backends.back(), reuse));
    }
  }
  for (auto& d : decoders) {
    for (int i = 0; i < 3; ++i) d->step();  // the capture, and the allocator and thread scratch at full size
  }
  for (auto& b : backends) b->graph_mode()->reset_stats();

  const int rounds = spec.big ? 5 : 7;
  const double min_s = spec.big ? 0.12 : 0.05;
  const double weight_bytes = double(llama.decode_weight_bytes());
  std::vector<double> bandwidths;
  const std::string tag = spec.name + "/" + std::string(dtype_name(type)) + "/" + std::to_string(threads) + "t";
  std::vector<std::function<void()>> fns;
  for (auto& d : decoders) fns.push_back([&d] { d->step(); });
  const auto times =
      measure_rounds(tag, fns, rounds, min_s, [&] { bandwidths.push_back(bandwidth.measure(threads, 1)); });

  Row row{};
  row.model = spec.name;
  row.type = std::string(dtype_name(type));
  row.threads = threads;
  row.nodes = decoders[0]->nodes();
  row.weight_mib = weight_bytes / (1 << 20);
  row.bandwidth = median_of(bandwidths);
  row.bound_s = weight_bytes / row.bandwidth;
  auto pair = [&](size_t eager, size_t graph) {
    Pair p{};
    p.eager_s = median_of(times[eager]);
    p.graph_s = median_of(times[graph]);
    p.ratio = median_ratio(times[eager], times[graph]);
    const GraphModeStats& stats = backends[graph]->graph_mode()->stats();
    p.graph_hit_rate = stats.computes ? double(stats.hits) / double(stats.computes) : 0.0;
    std::vector<double> effs;
    for (size_t r = 0; r < times[graph].size(); ++r) effs.push_back(weight_bytes / bandwidths[r] / times[graph][r]);
    p.bound_eff = median_of(effs);
    return p;
  };
  row.rebuild = pair(0, 1);
  row.reuse = pair(2, 3);
  return row;
}

json pair_json(const Pair& p) {
  return {{"eager_tokens_per_s", 1 / p.eager_s}, {"graph_tokens_per_s", 1 / p.graph_s},
          {"eager_step_s", p.eager_s},           {"graph_step_s", p.graph_s},
          {"graph_over_eager", p.ratio},         {"graph_hit_rate", p.graph_hit_rate},
          {"bound_over_graph_step", p.bound_eff}};
}

}  // namespace

void add_model_suite(CLI::App& app) {
  auto json_out = std::make_shared<bool>(false);
  auto type_names = std::make_shared<std::vector<std::string>>(std::vector<std::string>{"f16", "q8_0"});
  auto prefill_tokens = std::make_shared<int64_t>(256);
  auto peer_prefill_tokens = std::make_shared<int64_t>(128);
  auto peer_rounds = std::make_shared<int>(5);
  auto peer_models = std::make_shared<std::vector<std::string>>(std::vector<std::string>{"tiny", "d2048x8"});
  auto sections = std::make_shared<std::vector<std::string>>(std::vector<std::string>{"tiny", "d2048", "llama.cpp"});
  auto* cmd = app.add_subcommand("model",
                                 "Llama decode tokens/s: eager vs graph mode, and against the bandwidth bound; prefill "
                                 "tokens/s against f32 weights; decode and prefill against llama.cpp on the same GGUF "
                                 "files");
  cmd->add_flag("--json", *json_out, std::string("Print one JSON object instead of the table"));
  cmd->add_option(
         "--types", *type_names,
         "Weight types to time (f32, f16, bf16, q8_0, q4_0, q4_1, q5_0, q5_1, q4_k, q5_k, q6_k, and for the llama.cpp "
         "section q4_k_m: q4_K with q6_K for attn_v, ffn_down and output); a model whose widths are not whole blocks "
         "of a type (tiny for the K types) skips it")
      ->delimiter(',')
      ->check(CLI::IsMember(
          {"f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "q4_k", "q5_k", "q6_k", "q4_k_m"},
          CLI::ignore_case))
      ->capture_default_str();
  cmd->add_option("--prefill-tokens", *prefill_tokens,
                  "Prompt length of the prefill rows (d2048): longer prompts weigh attention more against the matrix "
                  "products")
      ->check(tg::cli::integer_in<int64_t>(1, kMaxPrefillTokens))
      ->capture_default_str();
  cmd->add_option("--sections", *sections,
                  "Sections to run: tiny and d2048 (eager vs graph mode, the bandwidth bound, prefill against f32 "
                  "weights), llama.cpp (ours against llama.cpp on the same GGUF files, see --llama-cpp-models; needs "
                  "scripts/setup-llama-cpp-peer before CMake)")
      ->delimiter(',')
      ->check(CLI::IsMember({"tiny", "d2048", "llama.cpp"}))
      ->capture_default_str();
  cmd->add_option("--llama-cpp-prefill-tokens", *peer_prefill_tokens,
                  "Prompt length of the llama.cpp section's prefill")
      ->check(tg::cli::integer_in<int64_t>(1, kMaxPrefillTokens))
      ->capture_default_str();
  cmd->add_option("--llama-cpp-rounds", *peer_rounds, "Rounds of the llama.cpp section (each: ours, then llama.cpp)")
      ->check(tg::cli::integer_in<int>(1, 100))
      ->capture_default_str();
  cmd->add_option("--llama-cpp-models", *peer_models,
                  "Models of the llama.cpp section: tiny (the preset) and d2048x8 (8 layers, d_model 2048, 16/8 heads, "
                  "n_ff 5632, vocabulary 8192)")
      ->delimiter(',')
      ->check(CLI::IsMember({"tiny", "d2048x8"}))
      ->capture_default_str();
  cmd->callback([json_out, type_names, prefill_tokens, peer_prefill_tokens, peer_rounds, peer_models, sections] {
    const auto run = [&](const std::string& section) { return std::ranges::count(*sections, section) > 0; };
    // A mix (q4_k_m) is a row of the llama.cpp section only.
    std::vector<DType> types;
    std::vector<PeerWeights> peer_weight_sets;
    for (const std::string& name : *type_names) {
      peer_weight_sets.push_back(peer_weights(name));
      if (peer_weight_sets.back().types.uniform()) types.push_back(peer_weight_sets.back().types.matrices);
    }
    const bool quiet = *json_out;
    const ReadBandwidth bandwidth;
    const auto kernels1 = bandwidth.measure_kernels(1, 5), kernels2 = bandwidth.measure_kernels(2, 5);
    double bw1 = 0, bw2 = 0;
    for (const ReadKernelRate& k : kernels1) bw1 = std::max(bw1, k.bytes_per_s);
    for (const ReadKernelRate& k : kernels2) bw2 = std::max(bw2, k.bytes_per_s);
    if (!quiet) {
      std::printf("memory read bandwidth, the bound (%s, medians of 5): 1t %.2f GB/s, 2t %.2f GB/s\n",
                  bandwidth.describe().c_str(), bw1 / 1e9, bw2 / 1e9);
      for (size_t k = 0; k < kernels1.size(); ++k) {
        std::printf("  %-22s 1t %6.2f GB/s  2t %6.2f GB/s\n", kernels1[k].name.c_str(), kernels1[k].bytes_per_s / 1e9,
                    kernels2[k].bytes_per_s / 1e9);
      }
      std::printf("\n");
    }
    if (!quiet && (run("tiny") || run("d2048"))) {
      std::printf(
          "decode: one token per step through model::LlamaSession, n_kv 64, f16 KV cache; rebuild = build +\n"
          "allocate + fill + compute + argmax every step, reuse = the previous step's graph refilled (the default);\n"
          "eager and graph mode, both ways, timed in alternating rounds (7, or 5 for d2048): tok/s from the median\n"
          "step, ratio = median of the rounds' graph/eager speed-ups; bound = weight bytes per token / read\n"
          "bandwidth (one run before each round); eff = median over the rounds of bound / graph step (reuse);\n"
          "* = the step's weights come partly from cache (under 4x the last-level cache and read faster than\n"
          "DRAM), so eff can pass 100%%.\n");
      std::printf("%-6s %-5s %3s %6s %8s | %9s %9s %6s | %9s %9s %6s | %6s %9s %9s %5s\n", "model", "type", "thr",
                  "nodes", "MiB", "eager", "graph", "ratio", "eager", "graph", "ratio", "bw", "bound us", "graph us",
                  "eff");
      std::printf("%-6s %-5s %3s %6s %8s | %26s | %26s |\n", "", "", "", "", "", "rebuild (tok/s)", "reuse (tok/s)");
    }
    std::vector<Row> rows;
    std::vector<PrefillRow> prefill_rows;
    for (const ModelSpec& spec : model_specs()) {
      if (!run(spec.name)) continue;
      std::optional<model::LlamaModel> f32;  // the prefill peer, generated once per model
      for (DType type : types) {
        const int64_t block = int64_t(dtype_traits(type).block_size);
        if (spec.config.n_embd % block != 0 || spec.config.n_ff % block != 0) {
          if (!quiet)
            std::printf("%-6s %-5s skipped: n_embd and n_ff are not whole %lld-element blocks\n", spec.name.c_str(),
                        std::string(dtype_name(type)).c_str(), (long long)block);
          continue;
        }
        model::LlamaModel llama = model::LlamaModel::generate(spec.config, type, kSeed);
        llama.place_weights(*cpu_backend(1, false));  // as `tilegraph run` does: the decode copies
        for (int threads : {1, 2}) {
          if (spec.big) {
            if (!f32) f32.emplace(model::LlamaModel::generate(spec.config, DType::F32, kSeed));
            prefill_rows.push_back(prefill_one(spec, llama, *f32, type, threads, *prefill_tokens));
          }
          const Row& r = rows.emplace_back(run_one(spec, llama, type, threads, bandwidth));
          if (!quiet) {
            std::printf(
                "%-6s %-5s %3d %6zu %8.2f | %9.1f %9.1f %5.2fx | %9.1f %9.1f %5.2fx | %6.2f %9.1f %9.1f %4.0f%%%s\n",
                r.model.c_str(), r.type.c_str(), r.threads, r.nodes, r.weight_mib, 1 / r.rebuild.eager_s,
                1 / r.rebuild.graph_s, r.rebuild.ratio, 1 / r.reuse.eager_s, 1 / r.reuse.graph_s, r.reuse.ratio,
                r.bandwidth / 1e9, r.bound_s * 1e6, r.reuse.graph_s * 1e6, 100 * r.reuse.bound_eff,
                bandwidth.bound_applies(r.weight_mib * (1 << 20)) ? "" : "*");
            std::fflush(stdout);
          }
        }
      }
    }

    // Targets, each over every type and thread count of its model.
    double tiny_worst = 1e9, tiny_best = 0, rebuild_worst = 1e9, rebuild_best = 0, big_worst = 1e9, big_best = 0;
    for (const Row& r : rows) {
      if (r.model == "tiny") {
        tiny_worst = std::min(tiny_worst, r.reuse.ratio);
        tiny_best = std::max(tiny_best, r.reuse.ratio);
        rebuild_worst = std::min(rebuild_worst, r.rebuild.ratio);
        rebuild_best = std::max(rebuild_best, r.rebuild.ratio);
      } else if (bandwidth.bound_applies(r.weight_mib * (1 << 20))) {
        big_worst = std::min(big_worst, r.reuse.bound_eff);
        big_best = std::max(big_best, r.reuse.bound_eff);
      }
    }
    const bool tiny_ran = tiny_best > 0, big_ran = big_best > 0;
    const std::string none = "not measured: no row of this model among --types";
    const std::string none_big = "not measured: every row of this model among --types has weights partly in cache";
    std::vector<Target> targets;
    if (run("tiny")) {
      targets.push_back(
          {"graph mode >= 1.3x eager on tiny (reuse)",
           tiny_ran ? fmt("%.2fx .. %.2fx (worst .. best of the types, 1t/2t)", tiny_worst, tiny_best) : none,
           tiny_ran && tiny_worst >= 1.3});
      targets.push_back({"graph mode >= 1.3x eager on tiny (rebuild)",
                         tiny_ran ? fmt("%.2fx .. %.2fx", rebuild_worst, rebuild_best) : none,
                         tiny_ran && rebuild_worst >= 1.3});
    }
    if (run("d2048")) {
      targets.push_back({"d2048 decode within 80% of the bandwidth bound",
                         big_ran ? fmt("%.0f%% .. %.0f%% of the bound", 100 * big_worst, 100 * big_best) : none_big,
                         big_ran && big_worst >= 0.8});
    }

    if (!quiet && !prefill_rows.empty()) {
      std::printf(
          "\nprefill: %lld tokens from an empty cache, eager (as `tilegraph run`), tok/s from the median of 5\n"
          "alternating rounds; peer: the same model with f32 weights (the float GEMM); ratio = median of the\n"
          "rounds' f32 time / this type's time.\n",
          (long long)*prefill_tokens);
      std::printf("%-6s %-5s %3s %10s %10s %7s\n", "model", "type", "thr", "tok/s", "f32 tok/s", "ratio");
      for (const PrefillRow& p : prefill_rows) {
        std::printf("%-6s %-5s %3d %10.1f %10.1f %6.2fx\n", p.model.c_str(), p.type.c_str(), p.threads, p.tokens_per_s,
                    p.f32_tokens_per_s, p.ratio);
      }
    }
    json j_llama_cpp = json::array();
    if (run("llama.cpp")) {
      j_llama_cpp = run_llama_cpp_section(peer_weight_sets, *peer_models, *peer_prefill_tokens, *peer_rounds, bandwidth,
                                          quiet, targets);
    }
    if (quiet) {
      json j_prefill = json::array();
      for (const PrefillRow& p : prefill_rows) {
        j_prefill.push_back({{"model", p.model},
                             {"weight_type", p.type},
                             {"threads", p.threads},
                             {"tokens", *prefill_tokens},
                             {"tokens_per_s", p.tokens_per_s},
                             {"f32_tokens_per_s", p.f32_tokens_per_s},
                             {"f32_time_over_this", p.ratio}});
      }
      json j_rows = json::array();
      for (const Row& r : rows) {
        j_rows.push_back({{"model", r.model},
                          {"weight_type", r.type},
                          {"threads", r.threads},
                          {"nodes", r.nodes},
                          {"decode_weight_mib", r.weight_mib},
                          {"rebuild", pair_json(r.rebuild)},
                          {"reuse", pair_json(r.reuse)},
                          {"read_bandwidth_gbs", r.bandwidth / 1e9},
                          {"bandwidth_bound_s", r.bound_s}});
      }
      json out = {{"suite", "model"},
                  {"read_bandwidth_gbs", {{"1t", bw1 / 1e9}, {"2t", bw2 / 1e9}}},
                  {"n_kv", 2 * kPrompt},
                  {"rows", j_rows},
                  {"prefill", j_prefill},
                  {"llama_cpp", j_llama_cpp},
                  {"targets", targets_json(targets)}};
      std::printf("%s\n", out.dump(2).c_str());
    } else {
      print_targets(targets);
    }
  });
}

}  // namespace tg::bench
