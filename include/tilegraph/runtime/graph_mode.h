#pragma once
// Graph mode (llama.cpp's CANN ACL graph with ggml-cuda's update rule), independent of any backend: decide per
// compute whether to run eagerly, replay a captured graph, re-bind one whose data moved, or
// capture a new one; keep the captures in a GraphCache; stop capturing while the workload
// changes every step, and start again once it is stable.
#include <cstdint>
#include <functional>
#include <list>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "tilegraph/runtime/backend.h"
#include "tilegraph/runtime/graph_cache.h"

namespace tg {

struct GraphModeConfig {
  bool enabled = true;              // TG_GRAPH_MODE
  bool prefill_use_graph = false;   // TG_PREFILL_USE_GRAPH
  size_t capacity = 12;             // TG_GRAPH_CACHE_CAPACITY: captured graphs kept
  size_t max_bytes = 0;             // TG_GRAPH_CACHE_MAX_BYTES: 0 for no byte bound
  int max_consecutive_updates = 4;  // TG_GRAPH_MAX_CONSECUTIVE_UPDATES: evicting captures in a row that stop capturing
  int admit_after = 1;              // TG_GRAPH_ADMIT_AFTER: sightings of a graph before it is captured

  // Defaults above, overridden by the environment; malformed values throw tg::Error.
  static GraphModeConfig from_env();
  void validate() const;
};

// Who runs the step: prefill (many query tokens) normally runs eagerly.
enum class Phase { kAuto, kPrefill, kDecode };

enum class EagerReason {
  kDisabled,        // graph mode off by configuration
  kPrefill,         // a prefill step and TG_PREFILL_USE_GRAPH is off
  kIncompatible,    // the backend cannot capture this graph
  kTooManyUpdates,  // a miss while the update guard has capturing switched off
  kWarmup,          // not seen often enough yet to be captured
  kCaptureFailed,   // capture failed before executing anything (CaptureError)
  kEmpty,           // an empty graph: nothing to capture
};
inline constexpr int kEagerReasonCount = int(EagerReason::kEmpty) + 1;
std::string_view eager_reason_name(EagerReason reason);

struct GraphModeStats {
  uint64_t computes = 0;
  uint64_t hits = 0;  // exact or re-bound matches
  uint64_t misses = 0;
  uint64_t captures = 0;
  uint64_t rebinds = 0;
  uint64_t evictions = 0;
  uint64_t replays = 0;
  uint64_t eager_runs = 0;
  uint64_t eager_by_reason[kEagerReasonCount] = {};
  uint64_t disables = 0;  // times the consecutive-update guard switched capturing off
  uint64_t reenables = 0;
  double capture_seconds = 0;
  double replay_seconds = 0;
  double eager_seconds = 0;
};

// True when `graph` processes more than one query token: FLASH_ATTN_EXT with q.ne[1] > 1, or
// the soft-max attention pattern (masked SOFT_MAX with more than one row per head).
bool is_prefill_graph(const Graph& graph);

// Safe to use from several threads: compute() holds the mode's lock for the whole step, and every
// accessor takes it too, so a server may read statistics or change the configuration while
// another thread decodes. stats() and reset_stats() have a lock of their own and never wait for a
// step in progress; the others wait for it to end.
class GraphMode {
 public:
  explicit GraphMode(GraphModeConfig config = GraphModeConfig::from_env());

  // Runs `graph` on `backend`; `eager` executes it node by node (the backend's own eager path).
  void compute(Backend& backend, const Graph& graph, const std::function<void()>& eager);

  // Applies to every compute until changed; kAuto detects prefill from the graph.
  void set_phase(Phase phase);
  void set_config(const GraphModeConfig& config);
  GraphModeConfig config() const;
  // A snapshot: the counters of the steps finished so far.
  GraphModeStats stats() const;
  void reset_stats();
  // Whether the consecutive-update guard has capturing switched off right now (the captures
  // already cached still replay).
  bool suspended() const;
  // Drops every capture (e.g. the backend's buffers are about to be freed).
  void clear();
  // Calls fn(const GraphCache&) under the lock and returns its result: for tests and tools that
  // look at the captures. Pointers into the cache stay valid only until the next compute.
  template <class Fn>
  decltype(auto) with_cache(Fn&& fn) const {
    std::lock_guard<std::mutex> lock(mutex_);
    return std::forward<Fn>(fn)(std::as_const(cache_));
  }

 private:
  void run_eager(EagerReason reason, const std::function<void()>& eager);
  bool admitted(uint64_t key);
  bool resumes(bool stable_step);
  bool seen_recently(uint64_t structure);
  template <class Update>
  void count(Update update) {
    std::lock_guard<std::mutex> lock(stats_mutex_);
    update(stats_);
  }

  mutable std::mutex mutex_;  // everything but the statistics
  GraphModeConfig config_;
  Phase phase_ = Phase::kAuto;
  GraphCache cache_;
  int consecutive_updates_ = 0;
  bool suspended_ = false;
  int stable_steps_ = 0;
  // While suspended: the structures of the graphs run, most recent first, at most `capacity`
  // distinct ones: what a cache of this capacity would hold had it captured every miss.
  std::list<uint64_t> recent_structures_;
  std::unordered_map<uint64_t, std::list<uint64_t>::iterator> recent_structure_index_;
  std::unordered_map<uint64_t, int> sightings_;  // for admit_after > 1; bounded

  mutable std::mutex stats_mutex_;
  GraphModeStats stats_;
};

// "hits 10, misses 2, captures 2, ..." for logs and the CLI.
std::string format_stats(const GraphModeStats& stats);

}  // namespace tg
