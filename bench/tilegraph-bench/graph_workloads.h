#pragma once
// What the sections of `tilegraph-bench graph` (graph_suite.cpp) share: the decode workload (a
// small llama-style model, one token per step), chains of ops on tiny tensors, and one entry
// point per section, each in its own file (graph_decode.cpp, graph_dispatch.cpp,
// graph_lookup.cpp, graph_cache_effect.cpp).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bandwidth.h"
#include "tilegraph/backends.h"
#include "tilegraph/core/context.h"
#include "tilegraph/model/transformer_block.h"
#include "tilegraph/runtime/graph_allocator.h"
#include "tilegraph/runtime/graph_mode.h"

namespace tg::bench::graph_suite {

int64_t round_up(int64_t n, int64_t to);
// A CPU backend with graph mode on or off, and a cache of `capacity` graphs.
std::unique_ptr<Backend> cpu_backend(int threads, bool graph_mode, size_t capacity = 12);
// The nodes of `graph` a backend executes (no-op nodes left out).
size_t executed_nodes(const Graph& graph);
double hit_rate(const GraphModeStats& s);

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
  std::vector<float> x;     // the residual stream fed to every step

  Model(const ModelSize& size, int64_t n_ctx);
};

struct StepGraph {
  Graph graph;
  model::StepInputs inputs;
};

// One token through every block, attending over n_kv cache rows.
StepGraph build_step(Context& ctx, const Model& m, int64_t n_kv);
// The residual stream and the step's positions and mask into the inputs.
void fill_inputs(const Model& m, const model::StepInputs& in, int64_t n_past);

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

// ---------------------------------------------------------------------------------------------
// Chains of ops on tiny tensors, where kernel time is negligible.

enum class ChainKind { kUnfusable, kFusable };

// n ops on [width] f32 tensors in an allocating context. Unfusable: scale, sum_rows, cont in
// turn, so no two row ops are adjacent. Fusable: scale and silu in turn, all row ops of one
// shape whose results have one consumer each: replay runs them as one fused pass.
Tensor* build_chain(Context& ctx, int n, ChainKind kind, int64_t width);

// ---------------------------------------------------------------------------------------------
// The sections.

// decode: eager vs graph replay per step and per compute, against the bandwidth bound.
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

std::vector<DecodeRow> run_decode(const ReadBandwidth& bandwidth, const std::vector<int64_t>& d_models, bool quiet);

// dispatch: per executed node on 1-element tensors, eager vs the graph-mode hit vs the replay.
struct DispatchRow {
  std::string chain;
  int threads;
  size_t executed;
  double eager_ns, hit_ns, launch_ns;  // per executed node
  double ratio;                        // eager / hit
  double hit_cpu_ns, launch_cpu_ns;    // the same in the calling thread's CPU time
};

std::vector<DispatchRow> run_dispatch(bool quiet);

// lookup: GraphSignature::key + GraphCache::find against a linear scan of node properties.
struct LookupRow {
  std::string scenario;
  size_t nodes;
  double key_ns, find_ns, ours_ns, scan_ns;  // per node
  double recent_ns;                          // find_recent: the hit is the most recent entry
  double ratio;                              // scan / ours
  double ours_cpu_ns, scan_cpu_ns;           // in the calling thread's CPU time
};

std::vector<LookupRow> run_lookup(bool quiet);

// cache effect: a workload cycling through k graphs against cache capacities.
constexpr int kCacheKs[] = {1, 2, 4, 8, 16};
constexpr size_t kCapacities[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

struct CacheCell {
  bool guard;  // the consecutive-update guard at its default (else disabled)
  int k;
  size_t capacity;  // 0: eager (graph mode off)
  double step_s;
  double hit_rate;
  double eager_fraction;  // steps run eagerly (suspended by the consecutive-update guard or a miss)
};

std::vector<CacheCell> run_cache();
void print_cache(const std::vector<CacheCell>& cells);

}  // namespace tg::bench::graph_suite
