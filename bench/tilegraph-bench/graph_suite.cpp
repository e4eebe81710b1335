// `tilegraph-bench graph`: what graph mode buys on the CPU backend, each figure against a peer
// measured in the same run:
//   decode   per-step time of a 4-block llama-style model (model::build_block) at d_model 64, 256
//            and 2048, 1 and 2 threads: eager (graph mode off) vs graph replay, the graph rebuilt
//            and allocated every step as a decode loop does; and the step against the memory-
//            bandwidth bound (weight bytes / read bandwidth measured here).
//   dispatch per executed node on 1-element tensors: eager, the graph-mode hit (key + find +
//            replay) and the replay alone, for a chain that cannot fuse and one that fuses.
//   lookup   GraphSignature::key + GraphCache::find per node on an exact hit, 1k and 10k nodes,
//            against the ACL graph cache's linear scan, memcmp-ing per-node property arrays.
//   cache    a workload cycling through k distinct graphs with cache capacities 1..16: time per
//            step and hit rate, with the consecutive-update guard at its default and disabled.
// `--only <section>` runs one of them; `--json` prints one object instead of the tables. Zero
// allocations on a hit is checked by a test (tests/unit/cpu/test_graph_no_alloc.cpp), which
// replaces the global operator new: the benchmark must not.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "graph_workloads.h"
#include "measure.h"
#include "suites.h"
#include "targets.h"

namespace tg::bench {

using nlohmann::json;
using namespace graph_suite;

void add_graph_suite(CLI::App& app) {
  auto json_out = std::make_shared<bool>(false);
  auto only = std::make_shared<std::string>();
  auto d_models = std::make_shared<std::vector<int64_t>>();
  auto* cmd =
      app.add_subcommand("graph", "Graph mode on the CPU backend: replay vs eager, dispatch, lookup, cache effect");
  cmd->add_flag("--json", *json_out, std::string("Print one JSON object instead of the tables"));
  cmd->add_option("--only", *only, "Run one section: decode, dispatch, lookup or cache")
      ->check(CLI::IsMember({"decode", "dispatch", "lookup", "cache"}));
  cmd->add_option("--d-model", *d_models, "Decode sizes to run (64, 256, 2048; default: all)")
      ->check(CLI::IsMember({64, 256, 2048}));
  cmd->callback([json_out, only, d_models] {
    auto run = [&](const char* section) { return only->empty() || *only == section; };
    const bool quiet = *json_out;
    json out = {{"suite", "graph"},
                {"layers_per_step", kLayers},
                {"weight_type", std::string(dtype_name(kWeightType))},
                {"n_kv", kDecodeContext}};

    std::vector<DecodeRow> decode;
    if (run("decode")) {
      const ReadBandwidth bandwidth;
      const double bw1 = bandwidth.measure(1, 7), bw2 = bandwidth.measure(2, 7);
      out["read_bandwidth_gbs"] = {{"1t", bw1 / 1e9}, {"2t", bw2 / 1e9}};
      if (!quiet) {
        std::printf("memory read bandwidth (%s, median of 7): 1t %.2f GB/s, 2t %.2f GB/s\n\n",
                    bandwidth.describe().c_str(), bw1 / 1e9, bw2 / 1e9);
        std::printf(
            "decode step: %d llama blocks (model::build_block), 1 token, n_kv %lld, %s weights, f16 KV cache;\n"
            "step = build graph + allocate + fill inputs + compute; compute = compute() of a graph built once;\n"
            "eager and graph timed in alternating rounds (7, or 5 at d_model 2048): medians, ratio = median of the\n"
            "rounds' ratios; bw = read bandwidth, one run before each round; bound = weight bytes / bw;\n"
            "eff = median over the rounds of bound / graph step. Times in us.\n",
            kLayers, (long long)kDecodeContext, std::string(dtype_name(kWeightType)).c_str());
        std::printf("%7s %3s %10s %8s %10s %10s %7s %10s %10s %7s %6s %6s %10s %7s\n", "d_model", "thr", "exec/nodes",
                    "MiB", "eager", "graph", "ratio", "eager-cmp", "graph-cmp", "ratio", "hits", "bw", "bound", "eff");
      }
      decode = run_decode(bandwidth, *d_models, quiet);
    }

    std::vector<DispatchRow> dispatch;
    if (run("dispatch")) {
      if (!quiet) {
        std::printf(
            "\ndispatch: 1000-op chains on 1-element f32 tensors, ns per executed node\n"
            "(hit = backend->compute on a cached graph: key + find + verify + replay; launch = replay alone;\n"
            "medians of 7 rounds, wall clock; -cpu: the calling thread's CPU time)\n");
        std::printf("%-30s %3s %6s %10s %10s %10s %9s %10s %10s\n", "chain", "thr", "nodes", "eager", "hit", "launch",
                    "eager/hit", "hit-cpu", "launch-cpu");
      }
      dispatch = run_dispatch(quiet);
    }

    std::vector<LookupRow> lookup;
    if (run("lookup")) {
      if (!quiet) {
        std::printf(
            "\nlookup + verify on an exact hit, ns per node: ours = GraphSignature::key + GraphCache::find;\n"
            "recent = GraphCache::find_recent, graph mode's first try (the hit is the most recent entry);\n"
            "scan = record the graph's node properties (ggml_graph_node_properties) + linear scan of 12\n"
            "graphs, memcmp each (the hit last in the scan); medians of 7 rounds, wall clock; -cpu: the thread's CPU "
            "time\n");
        std::printf("%-38s %6s %9s %9s %9s %9s %9s %9s %9s %9s\n", "cache holds", "nodes", "key", "find", "ours",
                    "recent", "scan", "scan/ours", "ours-cpu", "scan-cpu");
      }
      lookup = run_lookup(quiet);
    }

    std::vector<CacheCell> cache;
    if (run("cache")) {
      cache = run_cache();
      if (!quiet) print_cache(cache);
    }

    // Targets.
    std::vector<Target> targets;
    if (!dispatch.empty()) {
      double worst = 0, worst_cpu = 0;
      for (const DispatchRow& r : dispatch) {
        if (r.chain.rfind("unfusable", 0) != 0) continue;
        worst = std::max(worst, r.hit_ns);
        worst_cpu = std::max(worst_cpu, r.hit_cpu_ns);
      }
      targets.push_back({"replay dispatch overhead <= 100 ns per node",
                         fmt("worst %.1f ns (cpu %.1f; hit path, unfusable)", worst, worst_cpu), worst <= 100});
    }
    auto decoded = [&](int64_t d_model) {
      return std::any_of(decode.begin(), decode.end(), [&](const DecodeRow& r) { return r.d_model == d_model; });
    };
    if (!decode.empty()) {
      double step64 = 1e9, compute64 = 1e9, worst_step = 1e9, worst_compute = 1e9;
      for (const DecodeRow& r : decode) {
        const double step = r.step_ratio, compute = r.compute_ratio;
        if (r.d_model == 64) {
          step64 = std::min(step64, step);
          compute64 = std::min(compute64, compute);
        }
        worst_step = std::min(worst_step, step);
        worst_compute = std::min(worst_compute, compute);
      }
      if (decoded(64)) {
        targets.push_back({"replay >= 2x faster than eager at d_model 64",
                           fmt("step %.2fx, compute %.2fx (worse of 1t/2t)", step64, compute64), step64 >= 2});
      }
      targets.push_back({"replay never slower than eager",
                         fmt("worst step %.2fx, compute %.2fx", worst_step, worst_compute),
                         worst_step >= 1 && worst_compute >= 1});
    }
    if (decoded(2048)) {
      double worst = 1e9;
      for (const DecodeRow& r : decode) {
        if (r.d_model == 2048) worst = std::min(worst, r.bound_eff);
      }
      targets.push_back({"d_model 2048 within 85% of the bandwidth bound",
                         fmt("%.0f%% of the bound (worst of 1t/2t)", 100 * worst), worst >= 0.85});
    }
    if (!lookup.empty()) {
      double worst = 0, worst_cpu = 0, worst_recent = 0;
      for (const LookupRow& r : lookup) {
        worst = std::max(worst, r.ours_ns);
        worst_cpu = std::max(worst_cpu, r.ours_cpu_ns);
        worst_recent = std::max(worst_recent, r.recent_ns);
      }
      targets.push_back({"lookup + verify <= 20 ns per node, most recent entry",
                         fmt("worst %.1f ns (find_recent)", worst_recent), worst_recent <= 20});
      targets.push_back({"lookup + verify <= 20 ns per node, any entry",
                         fmt("worst %.1f ns (cpu %.1f; key + find)", worst, worst_cpu), worst <= 20});
    }

    if (quiet) {
      json j_decode = json::array(), j_dispatch = json::array(), j_lookup = json::array(), j_cache = json::array();
      for (const DecodeRow& r : decode) {
        j_decode.push_back({{"d_model", r.d_model},
                            {"threads", r.threads},
                            {"nodes", r.nodes},
                            {"executed_nodes", r.executed},
                            {"weight_mib", r.weight_mib},
                            {"eager_step_s", r.eager_step_s},
                            {"graph_step_s", r.graph_step_s},
                            {"step_ratio", r.step_ratio},
                            {"eager_compute_s", r.eager_compute_s},
                            {"graph_compute_s", r.graph_compute_s},
                            {"compute_ratio", r.compute_ratio},
                            {"graph_hit_rate", r.graph_hit_rate},
                            {"read_bandwidth_gbs", r.bandwidth / 1e9},
                            {"bandwidth_bound_s", r.bound_s},
                            {"bound_over_graph_step", r.bound_eff}});
      }
      for (const DispatchRow& r : dispatch) {
        j_dispatch.push_back({{"chain", r.chain},
                              {"threads", r.threads},
                              {"executed_nodes", r.executed},
                              {"eager_ns_per_node", r.eager_ns},
                              {"hit_ns_per_node", r.hit_ns},
                              {"launch_ns_per_node", r.launch_ns},
                              {"eager_over_hit", r.ratio},
                              {"hit_cpu_ns_per_node", r.hit_cpu_ns},
                              {"launch_cpu_ns_per_node", r.launch_cpu_ns}});
      }
      for (const LookupRow& r : lookup) {
        j_lookup.push_back({{"scenario", r.scenario},
                            {"nodes", r.nodes},
                            {"key_ns_per_node", r.key_ns},
                            {"find_ns_per_node", r.find_ns},
                            {"key_find_ns_per_node", r.ours_ns},
                            {"linear_scan_ns_per_node", r.scan_ns},
                            {"find_recent_ns_per_node", r.recent_ns},
                            {"scan_over_ours", r.ratio},
                            {"key_find_cpu_ns_per_node", r.ours_cpu_ns},
                            {"linear_scan_cpu_ns_per_node", r.scan_cpu_ns}});
      }
      for (const CacheCell& c : cache) {
        j_cache.push_back({{"update_guard", c.guard && c.capacity > 0},
                           {"k", c.k},
                           {"capacity", c.capacity},
                           {"graph_mode", c.capacity > 0},
                           {"step_s", c.step_s},
                           {"hit_rate", c.hit_rate},
                           {"eager_fraction", c.eager_fraction}});
      }
      out["decode"] = j_decode;
      out["dispatch"] = j_dispatch;
      out["lookup"] = j_lookup;
      out["cache_effect"] = j_cache;
      out["targets"] = targets_json(targets);
      std::printf("%s\n", out.dump(2).c_str());
    } else {
      print_targets(targets, "targets (zero allocations on a hit: see test_cpu GraphNoAlloc)");
    }
  });
}

}  // namespace tg::bench
