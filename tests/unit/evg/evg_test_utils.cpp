#include "evg/evg_test_utils.h"

#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <thread>

namespace tg::evg::test {

jit::Compiler& test_compiler() {
  static const std::filesystem::path dir = [] {
    char pattern[] = "/tmp/tg_evg_jit_XXXXXX";
    if (!mkdtemp(pattern)) throw Error("mkdtemp failed");
    return std::filesystem::path(pattern);
  }();
  static jit::Compiler compiler([] {
    jit::Config config = jit::Config::from_env();
    config.cache_dir = dir / "cache";
    return config;
  }());
  static const struct Cleanup {
    ~Cleanup() {
      std::error_code ignored;
      std::filesystem::remove_all(dir, ignored);
    }
  } cleanup;
  return compiler;
}

std::vector<float> naive_accumulator(int64_t m, int64_t n, int64_t k, Rng& rng) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> a(size_t(m * k)), b(size_t(k * n)), c(size_t(m * n));
  for (float& x : a) x = dist(rng);
  for (float& x : b) x = dist(rng);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0;
      for (int64_t p = 0; p < k; ++p) sum += double(a[size_t(i * k + p)]) * b[size_t(p * n + j)];
      c[size_t(i * n + j)] = float(sum);
    }
  }
  return c;
}

std::vector<float> random_vector(size_t size, Rng& rng, float lo, float hi) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(size);
  for (float& x : v) x = dist(rng);
  return v;
}

namespace {

struct ThreadPoolState {
  int threads;
};

void run_on_threads(void* pool, int64_t n_items, void (*fn)(void*, int64_t, int), void* arg) {
  const int threads = static_cast<ThreadPoolState*>(pool)->threads;
  std::atomic<int64_t> next{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      for (int64_t item = next++; item < n_items; item = next++) fn(arg, item, t);
    });
  }
  for (std::thread& w : workers) w.join();
}

}  // namespace

Launcher thread_launcher(int threads) {
  static ThreadPoolState states[65];
  ThreadPoolState& state = states[std::clamp(threads, 1, 64)];
  state.threads = std::clamp(threads, 1, 64);
  Launcher l;
  l.pool = &state;
  l.num_threads = state.threads;
  l.parallel_for = run_on_threads;
  return l;
}

void for_each_block(const std::vector<float>& acc, int64_t m, int64_t n, const BlockGrid& grid, Schedule schedule,
                    int threads, Rng& rng, const std::function<void(const AccBlock&, int)>& visit) {
  std::vector<AccBlock> blocks;
  for (int64_t bi = 0; bi < grid.row_blocks(m); ++bi) {
    for (int64_t bj = 0; bj < grid.col_blocks(n); ++bj) {
      AccBlock b;
      b.row0 = bi * grid.block_rows;
      b.col0 = bj * grid.block_cols;
      b.rows = std::min(grid.block_rows, m - b.row0);
      b.cols = std::min(grid.block_cols, n - b.col0);
      b.ld = n;
      b.data = acc.data() + b.row0 * n + b.col0;
      blocks.push_back(b);
    }
  }
  switch (schedule) {
    case Schedule::kSerial: break;
    case Schedule::kReversed: std::reverse(blocks.begin(), blocks.end()); break;
    case Schedule::kShuffled: std::shuffle(blocks.begin(), blocks.end(), rng); break;
    case Schedule::kThreads: {
      struct Job {
        const std::vector<AccBlock>* blocks;
        const std::function<void(const AccBlock&, int)>* visit;
      } job{&blocks, &visit};
      const Launcher launcher = thread_launcher(threads);
      launcher.parallel_for(
          launcher.pool, int64_t(blocks.size()),
          [](void* arg, int64_t item, int thread) {
            auto* j = static_cast<Job*>(arg);
            (*j->visit)((*j->blocks)[size_t(item)], thread);
          },
          &job);
      return;
    }
  }
  std::uniform_int_distribution<int> pick_thread(0, threads - 1);
  for (const AccBlock& b : blocks) visit(b, pick_thread(rng));
}

std::string compare(const std::vector<float>& out, const std::vector<double>& ref, double rel_tol, double abs_tol) {
  if (out.size() != ref.size()) {
    return "size " + std::to_string(out.size()) + " != reference size " + std::to_string(ref.size());
  }
  for (size_t i = 0; i < out.size(); ++i) {
    const double o = out[i], r = ref[i];
    bool ok;
    if (std::isnan(r) || std::isnan(o)) {
      ok = std::isnan(r) && std::isnan(o);
    } else if (std::isinf(r) || std::isinf(o)) {
      ok = o == r;
    } else {
      ok = std::fabs(o - r) <= abs_tol + rel_tol * std::fabs(r);
    }
    if (!ok) {
      std::ostringstream s;
      s.precision(9);
      s << "element " << i << ": got " << o << ", reference " << r;
      return s.str();
    }
  }
  return "";
}

std::string compare_bits(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return "sizes differ";
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::memcmp(&a[i], &b[i], sizeof(float)) != 0) {
      std::ostringstream s;
      s.precision(9);
      s << "element " << i << ": " << a[i] << " vs " << b[i];
      return s.str();
    }
  }
  return "";
}

std::string describe(const Shape& shape, const BlockGrid& grid) {
  return "shape " + std::to_string(shape.m) + "x" + std::to_string(shape.n) + " grid " +
         std::to_string(grid.block_rows) + "x" + std::to_string(grid.block_cols);
}

std::vector<Shape> test_shapes() {
  return {{0, 0}, {0, 5}, {4, 0}, {1, 1}, {1, 17}, {13, 1}, {2, 3}, {7, 5}, {13, 31}, {37, 64}, {64, 37}, {61, 129}};
}

std::vector<BlockGrid> test_grids() { return {{1, 1}, {3, 5}, {8, 16}, {7, 13}, {32, 64}, {200, 300}}; }

}  // namespace tg::evg::test
