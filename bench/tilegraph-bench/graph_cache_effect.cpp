// `tilegraph-bench graph`, cache section: a decode workload cycling through k distinct graphs (the
// d_model 64 model at n_kv = 32, 64, ..., 32k) on one thread, against every cache capacity, with
// the consecutive-update guard at its default and disabled.
#include <cstdio>
#include <functional>
#include <stdexcept>

#include "graph_workloads.h"
#include "measure.h"

namespace tg::bench::graph_suite {

namespace {

// One workload configuration: its own backend, allocator and step counter.
struct CacheRunner {
  std::unique_ptr<Backend> backend;
  std::unique_ptr<Decoder> decoder;
  int step = 0;

  CacheRunner(const Model& model, size_t capacity, bool guard)
      : backend(cpu_backend(1, capacity > 0, capacity > 0 ? capacity : 12)) {
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

}  // namespace

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
    std::printf(
        "\ncache effect, %s: steps cycle through k graphs (d_model 64 model, n_kv 32..32k), 1 thread;\n"
        "us per step / hit rate for cache capacity c (medians of 3 rounds)\n",
        guard ? "default update guard (capturing off after 4 evicting captures in a row)" : "update guard disabled");
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

}  // namespace tg::bench::graph_suite
