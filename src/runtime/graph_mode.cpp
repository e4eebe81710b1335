#include "tilegraph/runtime/graph_mode.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>
#include <optional>

#include "tilegraph/core/env.h"
#include "tilegraph/core/error.h"

namespace tg {

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Remembered graph keys for admission and for the update guard; beyond this many the admission
// counts start over and the guard forgets its oldest, so endless distinct graphs cannot grow them.
constexpr size_t kMaxSightings = 1024;

}  // namespace

std::string_view eager_reason_name(EagerReason reason) {
  switch (reason) {
    case EagerReason::kDisabled: return "disabled";
    case EagerReason::kPrefill: return "prefill";
    case EagerReason::kIncompatible: return "incompatible";
    case EagerReason::kTooManyUpdates: return "too_many_updates";
    case EagerReason::kWarmup: return "warmup";
    case EagerReason::kCaptureFailed: return "capture_failed";
    case EagerReason::kEmpty: return "empty";
  }
  return "unknown";
}

GraphModeConfig GraphModeConfig::from_env() {
  GraphModeConfig c;
  c.enabled = config::env_bool("TG_GRAPH_MODE", c.enabled);
  c.prefill_use_graph = config::env_bool("TG_PREFILL_USE_GRAPH", c.prefill_use_graph);
  constexpr long kMaxInt = std::numeric_limits<int>::max(), kMaxLong = std::numeric_limits<long>::max();
  c.capacity = size_t(config::env_int("TG_GRAPH_CACHE_CAPACITY", long(c.capacity), 1, kMaxInt));
  c.max_consecutive_updates =
      int(config::env_int("TG_GRAPH_MAX_CONSECUTIVE_UPDATES", c.max_consecutive_updates, 1, kMaxInt));
  c.admit_after = int(config::env_int("TG_GRAPH_ADMIT_AFTER", c.admit_after, 1, kMaxInt));
  // 0, the default, sets no byte bound.
  c.max_bytes = size_t(config::env_int("TG_GRAPH_CACHE_MAX_BYTES", long(c.max_bytes), 0, kMaxLong));
  return c;
}

void GraphModeConfig::validate() const {
  if (capacity == 0) throw Error("graph mode: the cache capacity must be at least 1");
  if (max_consecutive_updates < 1) throw Error("graph mode: max_consecutive_updates must be at least 1");
  if (admit_after < 1) throw Error("graph mode: admit_after must be at least 1");
}

bool is_prefill_graph(const Graph& graph) {
  for (const Tensor* node : graph.nodes()) {
    // Sources are checked only later (Backend::can_capture, check_graph_runnable).
    if (node->op == Op::FLASH_ATTN_EXT && node->src[0] && node->src[0]->ne[1] > 1) return true;
    if (node->op == Op::SOFT_MAX && node->src[1] && node->ne[1] > 1) return true;
  }
  return false;
}

GraphMode::GraphMode(GraphModeConfig config) : config_(config), cache_(config.capacity, config.max_bytes) {
  config_.validate();
}

void GraphMode::set_phase(Phase phase) {
  std::lock_guard<std::mutex> lock(mutex_);
  phase_ = phase;
}

void GraphMode::set_config(const GraphModeConfig& config) {
  config.validate();
  std::lock_guard<std::mutex> lock(mutex_);
  config_ = config;
  const size_t evicted = cache_.set_limits(config.capacity, config.max_bytes);
  count([&](GraphModeStats& s) { s.evictions += evicted; });
}

GraphModeConfig GraphMode::config() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return config_;
}

GraphModeStats GraphMode::stats() const {
  std::lock_guard<std::mutex> lock(stats_mutex_);
  return stats_;
}

void GraphMode::reset_stats() {
  std::lock_guard<std::mutex> lock(stats_mutex_);
  stats_ = {};
}

bool GraphMode::suspended() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return suspended_;
}

void GraphMode::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  cache_.clear();
}

void GraphMode::run_eager(EagerReason reason, const std::function<void()>& eager) {
  count([&](GraphModeStats& s) {
    ++s.eager_runs;
    ++s.eager_by_reason[int(reason)];
  });
  const auto start = std::chrono::steady_clock::now();
  eager();
  const double t = seconds_since(start);
  count([&](GraphModeStats& s) { s.eager_seconds += t; });
}

bool GraphMode::admitted(uint64_t key) {
  if (config_.admit_after <= 1) return true;
  if (sightings_.size() >= kMaxSightings) sightings_.clear();
  return ++sightings_[key] >= config_.admit_after;
}

// ggml-cuda's update rule switches CUDA graphs off for good. Here capturing comes back once the workload is one a
// cache of this capacity could serve: `max_consecutive_updates` steps in a row whose graph
// structure was among the last `capacity` distinct ones seen while suspended.
bool GraphMode::resumes(bool stable_step) {
  stable_steps_ = stable_step ? stable_steps_ + 1 : 0;
  if (stable_steps_ < config_.max_consecutive_updates) return false;
  suspended_ = false;
  consecutive_updates_ = 0;
  recent_structures_.clear();
  recent_structure_index_.clear();
  count([](GraphModeStats& s) { ++s.reenables; });
  return true;
}

// Whether `structure` is among the last `capacity` distinct structures seen while suspended,
// which it then joins at the front: an LRU cache of keys alone, so a cycle through more graphs
// than the cache holds never finds its next graph in it, just as it would never hit.
bool GraphMode::seen_recently(uint64_t structure) {
  const auto it = recent_structure_index_.find(structure);
  if (it != recent_structure_index_.end()) {
    recent_structures_.splice(recent_structures_.begin(), recent_structures_, it->second);
    return true;
  }
  recent_structures_.push_front(structure);
  recent_structure_index_.emplace(structure, recent_structures_.begin());
  while (recent_structures_.size() > std::min(config_.capacity, kMaxSightings)) {  // the capacity may have shrunk
    recent_structure_index_.erase(recent_structures_.back());
    recent_structures_.pop_back();
  }
  return false;
}

void GraphMode::compute(Backend& backend, const Graph& graph, const std::function<void()>& eager) {
  std::lock_guard<std::mutex> lock(mutex_);
  count([](GraphModeStats& s) { ++s.computes; });
  if (!config_.enabled) return run_eager(EagerReason::kDisabled, eager);
  if (graph.empty()) return run_eager(EagerReason::kEmpty, eager);
  // Prefill steps run eagerly unless prefill_use_graph. Detection scans every node, so a hit
  // takes it from the entry instead: graphs that match share their ops and shapes, hence their phase.
  const auto eager_prefill = [&](bool prefill_shaped) {
    const bool prefill = phase_ != Phase::kAuto ? phase_ == Phase::kPrefill : prefill_shaped;
    return prefill && !config_.prefill_use_graph;
  };
  if (phase_ == Phase::kPrefill && eager_prefill(true)) return run_eager(EagerReason::kPrefill, eager);

  // A decode loop replays one graph step after step: the most recent entry is checked first,
  // which costs one pass over the graph. Everything else needs the key, which that pass already
  // has if the graph differs from the entry in addresses only.
  std::optional<GraphKey> known_key;
  GraphCache::Lookup found = cache_.find_recent(graph, &known_key);
  GraphKey key;
  if (!found.entry) {
    key = known_key ? *known_key : GraphSignature::key(graph);
    found = cache_.find(graph, key);
  }
  if (found.entry && eager_prefill(found.entry->prefill_shaped)) return run_eager(EagerReason::kPrefill, eager);
  if (found.entry && found.match == SignatureMatch::kAddressesOnly) {
    if (backend.rebind(*found.entry->captured, graph)) {
      found.entry->signature.record(graph);  // same sizes: reuses its storage
      ++found.entry->rebinds;
      count([](GraphModeStats& s) { ++s.rebinds; });
    } else {
      cache_.erase(found.entry);
      found = {};
    }
  }
  if (found.entry) {
    // The guard stops captures, not replays: a hit costs nothing to keep.
    if (suspended_) resumes(seen_recently(found.entry->signature.recorded_key().structure));
    count([](GraphModeStats& s) { ++s.hits; });
    consecutive_updates_ = 0;
    const auto start = std::chrono::steady_clock::now();
    backend.launch(*found.entry->captured);
    const double t = seconds_since(start);
    ++found.entry->replays;
    found.entry->replay_seconds += t;
    count([&](GraphModeStats& s) {
      ++s.replays;
      s.replay_seconds += t;
    });
    return;
  }

  const bool prefill_shaped = is_prefill_graph(graph);
  if (eager_prefill(prefill_shaped)) return run_eager(EagerReason::kPrefill, eager);
  count([](GraphModeStats& s) { ++s.misses; });
  if (suspended_ && !resumes(seen_recently(key.structure))) {
    return run_eager(EagerReason::kTooManyUpdates, eager);
  }
  if (!backend.can_capture(graph)) {
    consecutive_updates_ = 0;
    return run_eager(EagerReason::kIncompatible, eager);
  }
  if (!admitted(key.structure)) return run_eager(EagerReason::kWarmup, eager);

  auto entry = std::make_unique<CachedGraph>();
  entry->signature.record(graph);
  entry->prefill_shaped = prefill_shaped;
  const auto start = std::chrono::steady_clock::now();
  try {
    entry->captured = backend.capture(graph);
  } catch (const CaptureError&) {
    // Nothing was executed or inserted: the step runs eagerly, which raises the backend's own
    // error if the fault is in the graph rather than in the capture. Other errors come from
    // executing the step and propagate, with nothing inserted either.
    return run_eager(EagerReason::kCaptureFailed, eager);
  }
  entry->capture_seconds = seconds_since(start);
  const double capture_seconds = entry->capture_seconds;
  const size_t evicted = cache_.insert(std::move(entry));
  count([&](GraphModeStats& s) {
    s.capture_seconds += capture_seconds;
    ++s.captures;
    s.evictions += evicted;
  });
  // ggml-cuda counts every update because it keeps one graph. With an LRU cache, filling
  // free slots is warm-up (a workload cycling through a few graphs), not churn: only captures
  // that push another graph out count towards switching graph mode off.
  if (evicted == 0) return;
  if (++consecutive_updates_ >= config_.max_consecutive_updates) {
    suspended_ = true;
    stable_steps_ = 0;
    count([](GraphModeStats& s) { ++s.disables; });
  }
}

std::string format_stats(const GraphModeStats& s) {
  char line[512];
  std::snprintf(line, sizeof line,
                "computes %llu, hits %llu, misses %llu, captures %llu, rebinds %llu, evictions %llu, "
                "replays %llu, eager %llu",
                (unsigned long long)s.computes, (unsigned long long)s.hits, (unsigned long long)s.misses,
                (unsigned long long)s.captures, (unsigned long long)s.rebinds, (unsigned long long)s.evictions,
                (unsigned long long)s.replays, (unsigned long long)s.eager_runs);
  std::string out = line;
  const char* sep = " (";
  for (int r = 0; r < kEagerReasonCount; ++r) {
    if (!s.eager_by_reason[r]) continue;
    out += sep + std::string(eager_reason_name(EagerReason(r))) + " " + std::to_string(s.eager_by_reason[r]);
    sep = ", ";
  }
  if (sep[0] == ',') out += ")";
  if (s.disables || s.reenables) {
    out += "; switched off " + std::to_string(s.disables) + ", back on " + std::to_string(s.reenables);
  }
  std::snprintf(line, sizeof line, "; capture %.3f ms, replay %.3f ms, eager %.3f ms", s.capture_seconds * 1e3,
                s.replay_seconds * 1e3, s.eager_seconds * 1e3);
  return out + line;
}

}  // namespace tg
