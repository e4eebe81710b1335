#pragma once
// Timing through Google Benchmark: each measurement is a registered benchmark run with several
// repetitions, of which we keep the median (this machine is noisy) plus min and max.
#include <functional>
#include <string>
#include <vector>

namespace tg::bench {

struct Timing {
  double median_s = 0;
  double min_s = 0;
  double max_s = 0;
  int repetitions = 0;
  // The calling thread's CPU time per call (median): unlike wall time, it leaves out the time
  // this process waited for a core, which on a shared machine can be most of a short call.
  double cpu_median_s = 0;
};

// Times one call of `fn` (the library chooses the iteration count).
Timing measure(const std::string& name, const std::function<void()>& fn, int repetitions = 5,
               double min_seconds = 0.05);

double median_of(std::vector<double> values);

// The load on this shared machine changes from second to second, so what is compared is measured
// in rounds: each round times every function once (one Google Benchmark repetition of at least
// min_s), in turn, so the two sides of a ratio see the same load. Returns the times by function;
// figures are the medians over the rounds, ratios the medians of the per-round ratios. `cpu`, if
// given, gets the calling thread's CPU times, which leave out the waits for a core.
std::vector<std::vector<double>> measure_rounds(const std::string& name, const std::vector<std::function<void()>>& fns,
                                                int rounds, double min_s,
                                                const std::function<void()>& before_round = {},
                                                std::vector<std::vector<double>>* cpu = nullptr);
// The median over the rounds of num[i] / den[i].
double median_ratio(const std::vector<double>& num, const std::vector<double>& den);

}  // namespace tg::bench
