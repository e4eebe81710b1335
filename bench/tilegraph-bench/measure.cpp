#include "measure.h"

#include <benchmark/benchmark.h>

#include <algorithm>
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

}  // namespace

Timing measure(const std::string& name, const std::function<void()>& fn, int repetitions, double min_seconds) {
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

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

std::vector<std::vector<double>> measure_rounds(const std::string& name, const std::vector<std::function<void()>>& fns,
                                                int rounds, double min_s, const std::function<void()>& before_round,
                                                std::vector<std::vector<double>>* cpu) {
  std::vector<std::vector<double>> times(fns.size());
  if (cpu) cpu->assign(fns.size(), {});
  for (int r = 0; r < rounds; ++r) {
    if (before_round) before_round();
    for (size_t f = 0; f < fns.size(); ++f) {
      const Timing t = measure(name + "/" + std::to_string(f), fns[f], 1, min_s);
      times[f].push_back(t.median_s);
      if (cpu) (*cpu)[f].push_back(t.cpu_median_s);
    }
  }
  return times;
}

double median_ratio(const std::vector<double>& num, const std::vector<double>& den) {
  std::vector<double> r;
  for (size_t i = 0; i < num.size(); ++i) r.push_back(num[i] / den[i]);
  return median_of(r);
}

}  // namespace tg::bench
