// `tilegraph-bench graph`: what graph mode buys on the CPU backend, each figure against a peer
// measured in the same run:
//   decode   per-step time of a 4-block llama-style model (model::build_block) at d_model 64, 256
//            and 2048, 1 and 2 threads: eager (graph mode off) vs graph replay, the graph rebuilt
//            and allocated every step as a decode loop does; and the step against the memory-
//            bandwidth bound (weight bytes / read bandwidth measured here).
//   dispatch per executed node on 1-element tensors: eager, the graph-mode hit (key + find +
//            replay) and the replay alone, for a chain that cannot fuse and one that fuses.
//   lookup   GraphSignature::key + GraphCache::find per node on an exact hit, 1k and 10k nodes,
//            against the seed's linear scan with memcmp of full per-node property arrays.
//   cache    a workload cycling through k distinct graphs with cache capacities 1..16: time per
//            step and hit rate, with the consecutive-update guard at its default and disabled.
// `--only <section>` runs one of them; `--json` prints one object instead of the tables. Zero
// allocations on a hit is checked by a test (tests/unit/cpu/test_graph_no_alloc.cpp), which
// replaces the global operator new: the benchmark must not.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <list>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "bandwidth.h"
#include "measure.h"
#include "suites.h"
#include "targets.h"
#include "tilegraph/backends.h"
#include "tilegraph/core/context.h"
#include "tilegraph/core/ops.h"
#include "tilegraph/model/transformer_block.h"
#include "tilegraph/runtime/graph_allocator.h"
#include "tilegraph/runtime/graph_cache.h"
#include "tilegraph/runtime/graph_mode.h"
#include "tilegraph/runtime/graph_signature.h"

namespace tg::bench {

namespace {

using nlohmann::json;

// ---------------------------------------------------------------------------------------------
// Shared helpers

int64_t round_up(int64_t n, int64_t to) { return (n + to - 1) / to * to; }

std::unique_ptr<Backend> cpu_backend(int threads, bool graph_mode, size_t capacity = 12) {
  auto backend = make_backend("cpu", {.num_threads = threads});
  GraphModeConfig config = backend->graph_mode()->config();
  config.enabled = graph_mode;
  config.capacity = capacity;
  backend->graph_mode()->set_config(config);
  return backend;
}

size_t executed_nodes(const Graph& graph) {
  size_t n = 0;
  for (const Tensor* node : graph.nodes()) n += node->is_noop() ? 0 : 1;
  return n;
}

double hit_rate(const GraphModeStats& s) { return s.computes ? double(s.hits) / double(s.computes) : 0.0; }

volatile float g_sink;  // keeps the lookup loop's result alive

// ---------------------------------------------------------------------------------------------
// Decode steps of a small llama-style model: kLayers blocks per step.

constexpr int kLayers = 4;
constexpr int64_t kKvPadding = 32;
constexpr int64_t kDecodeContext = 64;  // n_kv of every decode step (positions 32..63)
constexpr DType kWeightType = DType::F16;

struct ModelSize {
  int64_t d_model, n_head, n_head_kv;
};
constexpr ModelSize kSizes[] = {{64, 4, 2}, {256, 8, 4}, {2048, 32, 8}};

struct Model {
  model::BlockConfig config;
  Context ctx;  // weights and KV caches
  std::vector<model::BlockWeights> layers;
  std::vector<model::KvCache> caches;
  double weight_bytes = 0;  // read by every step (the KV caches are not counted)
  std::vector<float> x;  // the residual stream fed to every step

  Model(const ModelSize& size, int64_t n_ctx) {
    config.n_embd = size.d_model;
    config.n_head = size.n_head;
    config.n_head_kv = size.n_head_kv;
    config.n_ff = round_up(size.d_model * 8 / 3, 32);
    config.n_ctx = n_ctx;
    config.weight_type = kWeightType;
    config.cache_type = DType::F16;
    for (int l = 0; l < kLayers; ++l) {
      const model::BlockWeights& w = layers.emplace_back(model::make_block_weights(ctx, config, 1000 + 97 * uint64_t(l)));
      caches.push_back(model::make_kv_cache(ctx, config));
      for (const Tensor* t : {w.attn_norm, w.wq, w.wk, w.wv, w.wo, w.ffn_norm, w.w_gate, w.w_up, w.w_down}) {
        weight_bytes += double(t->nbytes());
      }
    }
    x.resize(size_t(size.d_model));
    for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37f * float(i));
  }
};

struct StepGraph {
  Graph graph;
  model::StepInputs inputs;
};

// One token through every block, attending over n_kv cache rows.
StepGraph build_step(Context& ctx, const Model& m, int64_t n_kv) {
  const model::StepInputs inputs = model::make_step_inputs(ctx, m.config, 1, n_kv);
  model::StepInputs layer_in = inputs;
  for (size_t l = 0; l < m.layers.size(); ++l) {
    layer_in.x = model::build_block(ctx, m.config, m.layers[l], m.caches[l], layer_in, n_kv);
  }
  return {Graph::build(layer_in.x), inputs};
}

void fill_inputs(const Model& m, const model::StepInputs& in, int64_t n_past) {
  std::memcpy(in.x->data, m.x.data(), m.x.size() * sizeof(float));
  model::fill_step_inputs(in, n_past);
}

// A decode loop on one backend with a persistent allocator: every step builds its graph in a
// fresh no_alloc context, allocates it, fills the inputs and computes.
class Decoder {
 public:
  Decoder(Backend& backend, const Model& model) : backend_(backend), model_(model) {}

  void step(int64_t n_past, int64_t n_kv) {
    Context ctx({.no_alloc = true});
    StepGraph s = build_step(ctx, model_, n_kv);
    allocator_.allocate(s.graph, backend_);
    fill_inputs(model_, s.inputs, n_past);
    backend_.compute(s.graph);
  }

  // Decode positions cycle through the last kKvPadding rows of the context, so n_kv (rounded up
  // to kKvPadding) stays kDecodeContext and every step has the same structure.
  void next_decode_step() {
    const int64_t n_past = kDecodeContext - kKvPadding + (step_++ % kKvPadding);
    step(n_past, round_up(n_past + 1, kKvPadding));
  }

  // A graph built once, for timing compute alone; it gets the same addresses as the steps.
  StepGraph& persistent_graph() {
    if (!persistent_) {
      persistent_ctx_ = std::make_unique<Context>(ContextOptions{.no_alloc = true});
      persistent_ = std::make_unique<StepGraph>(build_step(*persistent_ctx_, model_, kDecodeContext));
      allocator_.allocate(persistent_->graph, backend_);
      fill_inputs(model_, persistent_->inputs, kDecodeContext - 1);
    }
    return *persistent_;
  }

 private:
  Backend& backend_;
  const Model& model_;
  GraphAllocator allocator_;
  int64_t step_ = 0;
  std::unique_ptr<Context> persistent_ctx_;
  std::unique_ptr<StepGraph> persistent_;
};

struct DecodeRow {
  int64_t d_model;
  int threads;
  size_t nodes, executed;
  double weight_mib;
  double eager_step_s, graph_step_s, step_ratio;
  double eager_compute_s, graph_compute_s, compute_ratio;
  double graph_hit_rate;
  double bandwidth;  // read bandwidth, one run at the start of each step round, bytes/s
  double bound_s;    // weight bytes / bandwidth
  double bound_eff;  // median over the rounds of (weight bytes / that round's bandwidth) / graph step
};

std::vector<DecodeRow> run_decode(const ReadBandwidth& bandwidth, const std::vector<int64_t>& d_models, bool quiet) {
  std::vector<DecodeRow> rows;
  for (const ModelSize& size : kSizes) {
    if (!d_models.empty() && std::find(d_models.begin(), d_models.end(), size.d_model) == d_models.end()) continue;
    const Model model(size, kDecodeContext);
    for (int threads : {1, 2}) {
      auto eager_backend = cpu_backend(threads, false);
      auto graph_backend = cpu_backend(threads, true);
      Decoder eager(*eager_backend, model), graphed(*graph_backend, model);
      // Big models take tens of ms a step: fewer, shorter rounds keep the suite quick.
      const bool big = size.d_model >= 1024;
      const int rounds = big ? 5 : 7;
      const double min_s = big ? 0.08 : 0.03;
      const std::string tag = "decode/d" + std::to_string(size.d_model) + "/" + std::to_string(threads) + "t";

      DecodeRow row{};
      row.d_model = size.d_model;
      row.threads = threads;
      {
        Context ctx({.no_alloc = true});
        const StepGraph s = build_step(ctx, model, kDecodeContext);
        row.nodes = s.graph.size();
        row.executed = executed_nodes(s.graph);
      }
      row.weight_mib = model.weight_bytes / (1 << 20);
      for (int i = 0; i < 3; ++i) graphed.next_decode_step();  // capture, then hits
      eager.next_decode_step();

      // Steps, each round preceded by one bandwidth run for the bound.
      std::vector<double> bandwidths;
      graph_backend->graph_mode()->reset_stats();
      const auto steps = measure_rounds(tag + "/step", {[&] { eager.next_decode_step(); }, [&] { graphed.next_decode_step(); }},
                                        rounds, min_s, [&] { bandwidths.push_back(bandwidth.measure(threads, 1)); });
      row.graph_hit_rate = hit_rate(graph_backend->graph_mode()->stats());
      row.eager_step_s = median_of(steps[0]);
      row.graph_step_s = median_of(steps[1]);
      row.step_ratio = median_ratio(steps[0], steps[1]);
      std::vector<double> effs;
      for (int r = 0; r < rounds; ++r) effs.push_back(model.weight_bytes / bandwidths[size_t(r)] / steps[1][size_t(r)]);
      row.bandwidth = median_of(bandwidths);
      row.bound_s = model.weight_bytes / row.bandwidth;
      row.bound_eff = median_of(effs);

      // Compute alone, on graphs built once.
      const Graph& eager_graph = eager.persistent_graph().graph;
      const Graph& graph_graph = graphed.persistent_graph().graph;
      graph_backend->compute(graph_graph);
      const auto computes = measure_rounds(tag + "/compute", {[&] { eager_backend->compute(eager_graph); },
                                                               [&] { graph_backend->compute(graph_graph); }},
                                           rounds, min_s);
      row.eager_compute_s = median_of(computes[0]);
      row.graph_compute_s = median_of(computes[1]);
      row.compute_ratio = median_ratio(computes[0], computes[1]);
      rows.push_back(row);
      if (!quiet) {
        std::printf("%7lld %3d %5zu/%-4zu %8.2f %10.1f %10.1f %6.2fx %10.1f %10.1f %6.2fx %5.0f%% %6.2f %10.1f %6.0f%%\n",
                    (long long)row.d_model, row.threads, row.executed, row.nodes, row.weight_mib,
                    row.eager_step_s * 1e6, row.graph_step_s * 1e6, row.step_ratio,
                    row.eager_compute_s * 1e6, row.graph_compute_s * 1e6, row.compute_ratio,
                    row.graph_hit_rate * 100, row.bandwidth / 1e9, row.bound_s * 1e6, 100 * row.bound_eff);
        std::fflush(stdout);
      }
    }
  }
  return rows;
}

// ---------------------------------------------------------------------------------------------
// Chains of ops on tiny tensors, where kernel time is negligible.

enum class ChainKind { kUnfusable, kFusable };

// n ops on [width] f32 tensors in an allocating context. Unfusable: scale, sum_rows, cont in
// turn, so no two row ops are adjacent. Fusable: scale and silu in turn, all row ops of one
// shape whose results have one consumer each: replay runs them as one fused pass.
Tensor* build_chain(Context& ctx, int n, ChainKind kind, int64_t width) {
  Tensor* x = ctx.new_tensor(DType::F32, {width});
  x->flags |= kFlagInput;
  for (int64_t i = 0; i < width; ++i) static_cast<float*>(x->data)[i] = 0.5f + 0.01f * float(i);
  Tensor* t = x;
  for (int i = 0; i < n; ++i) {
    if (kind == ChainKind::kFusable) {
      t = i % 2 ? silu(ctx, t) : scale(ctx, t, 0.999f, 0.001f);
    } else {
      switch (i % 3) {
        case 0: t = scale(ctx, t, 0.999f, 0.001f); break;
        case 1: t = sum_rows(ctx, t); break;
        default: t = cont(ctx, t); break;
      }
    }
  }
  return t;
}

struct DispatchRow {
  std::string chain;
  int threads;
  size_t executed;
  double eager_ns, hit_ns, launch_ns;  // per executed node
  double ratio;                        // eager / hit
  double hit_cpu_ns, launch_cpu_ns;    // the same in the calling thread's CPU time
};

std::vector<DispatchRow> run_dispatch(bool quiet) {
  constexpr int kChain = 1000;
  std::vector<DispatchRow> rows;
  for (int threads : {1, 2}) {
    auto eager = cpu_backend(threads, false);
    auto graphed = cpu_backend(threads, true);
    for (ChainKind kind : {ChainKind::kUnfusable, ChainKind::kFusable}) {
      Context ctx;
      const Graph graph = Graph::build(build_chain(ctx, kChain, kind, 1));
      const std::string name = kind == ChainKind::kFusable ? "fusable scale/silu" : "unfusable scale/sum_rows/cont";
      graphed->graph_mode()->clear();
      graphed->compute(graph);  // capture
      graphed->compute(graph);  // hit
      // Timed directly: nothing else computes on this backend meanwhile.
      CapturedGraph& captured = *graphed->graph_mode()->with_cache(
          [](const GraphCache& cache) { return cache.entries().front()->captured.get(); });
      const std::string tag = "dispatch/" + name + "/" + std::to_string(threads) + "t";
      DispatchRow row{name, threads, executed_nodes(graph), 0, 0, 0, 0, 0, 0};
      const double n = double(row.executed);
      std::vector<std::vector<double>> cpu;
      const auto t = measure_rounds(tag, {[&] { eager->compute(graph); }, [&] { graphed->compute(graph); },
                                          [&] { graphed->launch(captured); }},
                                    7, 0.02, {}, &cpu);
      row.hit_cpu_ns = median_of(cpu[1]) / n * 1e9;
      row.launch_cpu_ns = median_of(cpu[2]) / n * 1e9;
      row.eager_ns = median_of(t[0]) / n * 1e9;
      row.hit_ns = median_of(t[1]) / n * 1e9;
      row.launch_ns = median_of(t[2]) / n * 1e9;
      row.ratio = median_ratio(t[0], t[1]);
      rows.push_back(row);
      if (!quiet) {
        std::printf("%-30s %3d %6zu %10.1f %10.1f %10.1f %8.2fx %10.1f %10.1f\n", row.chain.c_str(), row.threads,
                    row.executed, row.eager_ns, row.hit_ns, row.launch_ns, row.ratio, row.hit_cpu_ns, row.launch_cpu_ns);
        std::fflush(stdout);
      }
    }
  }
  return rows;
}

// ---------------------------------------------------------------------------------------------
// Lookup + verify: ours against the seed's linear scan.

// Seed 000 §6.1 ggml_graph_node_properties: every property of a node and its sources.
struct SeedNodeProperties {
  const void* node_address;
  int64_t ne[kMaxDims];
  size_t nb[kMaxDims];
  const void* src_address[kMaxSrc];
  int64_t src_ne[kMaxSrc][kMaxDims];
  size_t src_nb[kMaxSrc][kMaxDims];
  int32_t node_op;
  int32_t op_params[kMaxOpParams];
};

// Seed 000's matching: per executed node (no-op nodes skipped) the properties above, a VIEW's
// address not compared; a lookup records the graph's properties and scans the cache from the
// front, memcmp-ing the arrays of every graph with the same node count.
class SeedCache {
 public:
  static void record(const Graph& graph, std::vector<SeedNodeProperties>& out) {
    out.resize(graph.size());  // capacity kept: no allocation once warm
    size_t n = 0;
    for (const Tensor* node : graph.nodes()) {
      if (node->is_noop()) continue;
      SeedNodeProperties& p = out[n++];
      std::memset(&p, 0, sizeof p);  // padding too, for memcmp
      p.node_address = node->op == Op::VIEW ? nullptr : node->data;
      std::memcpy(p.ne, node->ne, sizeof p.ne);
      std::memcpy(p.nb, node->nb, sizeof p.nb);
      for (int j = 0; j < kMaxSrc; ++j) {
        const Tensor* src = node->src[j];
        if (!src) continue;
        p.src_address[j] = src->data;
        std::memcpy(p.src_ne[j], src->ne, sizeof p.src_ne[j]);
        std::memcpy(p.src_nb[j], src->nb, sizeof p.src_nb[j]);
      }
      p.node_op = int32_t(node->op);
      std::memcpy(p.op_params, node->op_params, sizeof p.op_params);
    }
    out.resize(n);
  }

  void push_back(const Graph& graph) {
    entries_.emplace_back();
    record(graph, entries_.back());
  }

  // The index of the matching entry or -1. The hit stays where it is, so every lookup scans the
  // same entries (the worst case puts it last).
  int find(const Graph& graph) {
    record(graph, scratch_);
    int index = 0;
    for (const std::vector<SeedNodeProperties>& entry : entries_) {
      if (entry.size() == scratch_.size() &&
          std::memcmp(entry.data(), scratch_.data(), entry.size() * sizeof(SeedNodeProperties)) == 0) {
        return index;
      }
      ++index;
    }
    return -1;
  }

 private:
  std::list<std::vector<SeedNodeProperties>> entries_;
  std::vector<SeedNodeProperties> scratch_;
};

struct LookupRow {
  std::string scenario;
  size_t nodes;
  double key_ns, find_ns, ours_ns, seed_ns;  // per node
  double recent_ns;                          // find_recent: the hit is the most recent entry
  double ratio;                              // seed / ours
  double ours_cpu_ns, seed_cpu_ns;           // in the calling thread's CPU time
};

std::vector<LookupRow> run_lookup(bool quiet) {
  constexpr int kCached = 12;
  std::vector<LookupRow> rows;
  for (int n : {1000, 10000}) {
    // distinct: 12 graphs of different widths (different keys), the target last in the scans.
    // same-shape: 12 identical chains built in different contexts (same key and structure,
    // different data addresses: the cache verifies every one of them), the target last.
    for (const bool same_shape : {false, true}) {
      std::vector<std::unique_ptr<Context>> contexts;
      std::vector<Graph> graphs;
      for (int g = 0; g < kCached; ++g) {
        contexts.push_back(std::make_unique<Context>());
        const int64_t width = same_shape ? 1 : kCached - g;  // the target (last) has width 1
        graphs.push_back(Graph::build(build_chain(*contexts.back(), n, ChainKind::kUnfusable, width)));
      }
      const Graph& target = graphs.back();
      GraphCache cache(kCached);
      SeedCache seed;
      // Inserted so the target ends up least recently used, and scanned last by the seed.
      for (int g = kCached - 1; g >= 0; --g) {
        auto entry = std::make_unique<CachedGraph>();
        entry->signature.record(graphs[size_t(g)]);
        cache.insert(std::move(entry));
      }
      for (const Graph& g : graphs) seed.push_back(g);
      if (cache.find(target, GraphSignature::key(target)).match != SignatureMatch::kExact || seed.find(target) != kCached - 1) {
        throw std::runtime_error("graph bench: lookup baseline does not find its graph");
      }
      const std::string tag = "lookup/" + std::to_string(n) + (same_shape ? "/same-shape" : "/distinct");
      LookupRow row{same_shape ? "12 same-shape graphs, other addresses" : "12 distinct graphs", size_t(n), 0, 0, 0, 0, 0, 0, 0, 0};
      const double per = 1e9 / double(n);
      uint64_t key = 0;
      const GraphKey target_key = GraphSignature::key(target);
      std::vector<std::vector<double>> cpu;
      const auto t = measure_rounds(tag, {[&] { key += GraphSignature::key(target).structure; },
                                          [&] { key += uint64_t(cache.find(target, target_key).match); },
                                          [&] { key += uint64_t(cache.find(target, GraphSignature::key(target)).match); },
                                          [&] { key += uint64_t(seed.find(target)); },
                                          [&] { key += uint64_t(cache.find_recent(target).match); }},
                                    7, 0.01, {}, &cpu);
      row.ours_cpu_ns = median_of(cpu[2]) * per;
      row.seed_cpu_ns = median_of(cpu[3]) * per;
      row.key_ns = median_of(t[0]) * per;
      row.find_ns = median_of(t[1]) * per;
      row.ours_ns = median_of(t[2]) * per;
      row.seed_ns = median_of(t[3]) * per;
      row.recent_ns = median_of(t[4]) * per;
      row.ratio = median_ratio(t[3], t[2]);
      g_sink = float(key);
      rows.push_back(row);
      if (!quiet) {
        std::printf("%-38s %6zu %9.2f %9.2f %9.2f %9.2f %9.2f %8.1fx %9.2f %9.2f\n", row.scenario.c_str(), row.nodes,
                    row.key_ns, row.find_ns, row.ours_ns, row.recent_ns, row.seed_ns, row.ratio, row.ours_cpu_ns,
                    row.seed_cpu_ns);
        std::fflush(stdout);
      }
    }
  }
  return rows;
}

// ---------------------------------------------------------------------------------------------
// Cache effect: a step cycles through k distinct graphs (the d_model 64 model at n_kv = 32,
// 64, ..., 32k) on one thread, graph mode with capacity c; default guard settings.

constexpr int kCacheKs[] = {1, 2, 4, 8, 16};
constexpr size_t kCapacities[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

struct CacheCell {
  bool guard;      // the consecutive-update guard at its default (else disabled)
  int k;
  size_t capacity;  // 0: eager (graph mode off)
  double step_s;
  double hit_rate;
  double eager_fraction;  // steps run eagerly (suspended by the consecutive-update guard or a miss)
};

// One workload configuration: its own backend, allocator and step counter.
struct CacheRunner {
  std::unique_ptr<Backend> backend;
  std::unique_ptr<Decoder> decoder;
  int step = 0;

  CacheRunner(const Model& model, size_t capacity, bool guard) : backend(cpu_backend(1, capacity > 0, capacity > 0 ? capacity : 12)) {
    if (!guard) {
      GraphModeConfig config = backend->graph_mode()->config();
      config.max_consecutive_updates = 1 << 30;
      backend->graph_mode()->set_config(config);
    }
    decoder = std::make_unique<Decoder>(*backend, model);
  }
  void next(int k) {
    const int64_t n_kv = 32 * (step++ % k + 1);
    decoder->step(n_kv - 1, n_kv);
  }
};

// Per k: eager, then every capacity with the guard at its default, then with it disabled, all
// timed in the same rounds.
std::vector<CacheCell> run_cache() {
  const Model model(kSizes[0], 32 * 16);
  std::vector<CacheCell> cells;
  for (int k : kCacheKs) {
    std::vector<CacheCell> row{{true, k, 0, 0, 0, 0}};
    for (const bool guard : {true, false}) {
      for (size_t capacity : kCapacities) row.push_back({guard, k, capacity, 0, 0, 0});
    }
    std::vector<std::unique_ptr<CacheRunner>> runners;
    std::vector<std::function<void()>> fns;
    for (const CacheCell& c : row) {
      CacheRunner& r = *runners.emplace_back(std::make_unique<CacheRunner>(model, c.capacity, c.guard));
      for (int i = 0; i < 2 * k + 2; ++i) r.next(k);  // warm-up: captures and the allocator's buffer
      r.backend->graph_mode()->reset_stats();
      fns.push_back([&r, k] { r.next(k); });
    }
    const auto times = measure_rounds("cache/k" + std::to_string(k), fns, 3, 0.03);
    for (size_t i = 0; i < row.size(); ++i) {
      const GraphModeStats& stats = runners[i]->backend->graph_mode()->stats();
      row[i].step_s = median_of(times[i]);
      row[i].hit_rate = hit_rate(stats);
      row[i].eager_fraction = stats.computes ? double(stats.eager_runs) / double(stats.computes) : 1.0;
    }
    cells.insert(cells.end(), row.begin(), row.end());
  }
  return cells;
}

void print_cache(const std::vector<CacheCell>& cells) {
  const auto cell = [&](bool guard, int k, size_t capacity) -> const CacheCell& {
    for (const CacheCell& c : cells) {
      if (c.k == k && c.capacity == capacity && (capacity == 0 || c.guard == guard)) return c;
    }
    throw std::runtime_error("graph bench: no cache cell for k " + std::to_string(k));
  };
  for (const bool guard : {true, false}) {
    std::printf("\ncache effect, %s: steps cycle through k graphs (d_model 64 model, n_kv 32..32k), 1 thread;\n"
                "us per step / hit rate for cache capacity c (medians of 3 rounds)\n",
                guard ? "default update guard (capturing off after 4 evicting captures in a row)"
                      : "update guard disabled");
    std::printf("%6s", "");
    for (int k : kCacheKs) std::printf(" %13s", ("k=" + std::to_string(k)).c_str());
    std::printf("\n%6s", "eager");
    for (int k : kCacheKs) std::printf(" %13.1f", cell(guard, k, 0).step_s * 1e6);
    std::printf("\n");
    for (size_t capacity : kCapacities) {
      std::printf("%6s", ("c=" + std::to_string(capacity)).c_str());
      for (int k : kCacheKs) {
        const CacheCell& c = cell(guard, k, capacity);
        std::printf(" %8.1f/%3.0f%%", c.step_s * 1e6, c.hit_rate * 100);
      }
      std::printf("\n");
    }
  }
}

// ---------------------------------------------------------------------------------------------

}  // namespace

void add_graph_suite(CLI::App& app) {
  auto json_out = std::make_shared<bool>(false);
  auto only = std::make_shared<std::string>();
  auto d_models = std::make_shared<std::vector<int64_t>>();
  auto* cmd = app.add_subcommand("graph", "Graph mode on the CPU backend: replay vs eager, dispatch, lookup, cache effect");
  cmd->add_flag("--json", *json_out, std::string("Print one JSON object instead of the tables"));
  cmd->add_option("--only", *only, "Run one section: decode, dispatch, lookup or cache")
      ->check(CLI::IsMember({"decode", "dispatch", "lookup", "cache"}));
  cmd->add_option("--d-model", *d_models, "Decode sizes to run (64, 256, 2048; default: all)")
      ->check(CLI::IsMember({64, 256, 2048}));
  cmd->callback([json_out, only, d_models] {
    auto run = [&](const char* section) { return only->empty() || *only == section; };
    const bool quiet = *json_out;
    json out = {{"suite", "graph"}, {"layers_per_step", kLayers}, {"weight_type", std::string(dtype_name(kWeightType))},
                {"n_kv", kDecodeContext}};

    std::vector<DecodeRow> decode;
    if (run("decode")) {
      const ReadBandwidth bandwidth;
      const double bw1 = bandwidth.measure(1, 7), bw2 = bandwidth.measure(2, 7);
      out["read_bandwidth_gbs"] = {{"1t", bw1 / 1e9}, {"2t", bw2 / 1e9}};
      if (!quiet) {
        std::printf("memory read bandwidth (sum of a 512 MiB f32 array, %d streams per thread, median of 7): "
                    "1t %.2f GB/s, 2t %.2f GB/s\n\n", kBandwidthStreams, bw1 / 1e9, bw2 / 1e9);
        std::printf("decode step: %d llama blocks (model::build_block), 1 token, n_kv %lld, %s weights, f16 KV cache;\n"
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
        std::printf("\ndispatch: 1000-op chains on 1-element f32 tensors, ns per executed node\n"
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
        std::printf("\nlookup + verify on an exact hit, ns per node: ours = GraphSignature::key + GraphCache::find;\n"
                    "recent = GraphCache::find_recent, graph mode's first try (the hit is the most recent entry);\n"
                    "seed = record the graph's seed-000 node properties + linear scan of 12 graphs, memcmp each\n"
                    "(the hit last in the scan); medians of 7 rounds, wall clock; -cpu: the thread's CPU time\n");
        std::printf("%-38s %6s %9s %9s %9s %9s %9s %9s %9s %9s\n", "cache holds", "nodes", "key", "find", "ours",
                    "recent", "seed", "seed/ours", "ours-cpu", "seed-cpu");
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
      targets.push_back({"d_model 2048 within 85% of the bandwidth bound", fmt("%.0f%% of the bound (worst of 1t/2t)", 100 * worst), worst >= 0.85});
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
        j_decode.push_back({{"d_model", r.d_model}, {"threads", r.threads}, {"nodes", r.nodes}, {"executed_nodes", r.executed},
                            {"weight_mib", r.weight_mib}, {"eager_step_s", r.eager_step_s}, {"graph_step_s", r.graph_step_s},
                            {"step_ratio", r.step_ratio}, {"eager_compute_s", r.eager_compute_s},
                            {"graph_compute_s", r.graph_compute_s}, {"compute_ratio", r.compute_ratio},
                            {"graph_hit_rate", r.graph_hit_rate}, {"read_bandwidth_gbs", r.bandwidth / 1e9},
                            {"bandwidth_bound_s", r.bound_s}, {"bound_over_graph_step", r.bound_eff}});
      }
      for (const DispatchRow& r : dispatch) {
        j_dispatch.push_back({{"chain", r.chain}, {"threads", r.threads}, {"executed_nodes", r.executed},
                              {"eager_ns_per_node", r.eager_ns}, {"hit_ns_per_node", r.hit_ns}, {"launch_ns_per_node", r.launch_ns},
                              {"eager_over_hit", r.ratio}, {"hit_cpu_ns_per_node", r.hit_cpu_ns},
                              {"launch_cpu_ns_per_node", r.launch_cpu_ns}});
      }
      for (const LookupRow& r : lookup) {
        j_lookup.push_back({{"scenario", r.scenario}, {"nodes", r.nodes}, {"key_ns_per_node", r.key_ns},
                            {"find_ns_per_node", r.find_ns}, {"key_find_ns_per_node", r.ours_ns}, {"seed_scan_ns_per_node", r.seed_ns},
                            {"find_recent_ns_per_node", r.recent_ns},
                            {"seed_over_ours", r.ratio}, {"key_find_cpu_ns_per_node", r.ours_cpu_ns},
                            {"seed_scan_cpu_ns_per_node", r.seed_cpu_ns}});
      }
      for (const CacheCell& c : cache) {
        j_cache.push_back({{"update_guard", c.guard && c.capacity > 0}, {"k", c.k}, {"capacity", c.capacity}, {"graph_mode", c.capacity > 0}, {"step_s", c.step_s},
                           {"hit_rate", c.hit_rate}, {"eager_fraction", c.eager_fraction}});
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
