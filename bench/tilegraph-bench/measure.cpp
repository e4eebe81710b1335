#include "measure.h"

#include <benchmark/benchmark.h>

#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

namespace tg::bench {

namespace {

// Collects the per-repetition times instead of printing them.
class CollectingReporter final : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      if (run.run_type == Run::RT_Iteration && run.iterations > 0) {
        seconds.push_back(run.real_accumulated_time / double(run.iterations));
        cpu_seconds.push_back(run.cpu_accumulated_time / double(run.iterations));
      }
    }
  }
  std::vector<double> seconds;
  std::vector<double> cpu_seconds;
};

volatile float bandwidth_sink;

// SSE2 (the x86-64 baseline) with eight independent accumulators: far more adds per second than
// DRAM delivers floats.
float sum_floats(const float* p, size_t n) {
  __m128 acc[8];
  for (__m128& a : acc) a = _mm_setzero_ps();
  const size_t per = n / kBandwidthStreams / 32 * 32;  // floats per stream
  for (size_t i = 0; i < per; i += 32) {
    for (int s = 0; s < kBandwidthStreams; ++s) {
      const float* q = p + size_t(s) * per + i;
      for (int k = 0; k < 8; ++k) acc[k] = _mm_add_ps(acc[k], _mm_loadu_ps(q + 4 * k));
    }
  }
  float lanes[4];
  float sum = 0;
  for (const __m128& a : acc) {
    _mm_storeu_ps(lanes, a);
    sum += lanes[0] + lanes[1] + lanes[2] + lanes[3];
  }
  for (size_t i = per * kBandwidthStreams; i < n; ++i) sum += p[i];
  return sum;
}

}  // namespace

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

double read_bandwidth(const float* data, size_t n, int threads, int runs) {
  std::vector<double> rates;
  for (int r = 0; r < runs; ++r) {
    std::vector<float> partial(size_t(threads), 0.0f);
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> workers;
    const size_t per = n / size_t(threads);
    for (int t = 1; t < threads; ++t) {
      workers.emplace_back([&, t] {
        const size_t end = t == threads - 1 ? n : per * size_t(t + 1);
        partial[size_t(t)] = sum_floats(data + per * size_t(t), end - per * size_t(t));
      });
    }
    partial[0] = sum_floats(data, threads == 1 ? n : per);
    for (std::thread& w : workers) w.join();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    float total = 0;
    for (float p : partial) total += p;
    bandwidth_sink = total;
    rates.push_back(double(n * sizeof(float)) / s);
  }
  return median_of(rates);
}

Timing measure(const std::string& name, const std::function<void()>& fn, int repetitions,
               double min_seconds) {
  benchmark::ClearRegisteredBenchmarks();
  benchmark::RegisterBenchmark(name.c_str(),
                               [&fn](benchmark::State& state) {
                                 for (auto _ : state) fn();
                               })
      ->Repetitions(repetitions)
      ->MinTime(min_seconds)
      ->UseRealTime()
      ->Unit(benchmark::kMicrosecond);
  CollectingReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::ClearRegisteredBenchmarks();
  std::vector<double>& s = reporter.seconds;
  Timing t;
  if (s.empty()) return t;
  std::sort(s.begin(), s.end());
  t.median_s = median_of(s);
  t.cpu_median_s = median_of(reporter.cpu_seconds);
  t.min_s = s.front();
  t.max_s = s.back();
  t.repetitions = int(s.size());
  return t;
}

}  // namespace tg::bench
