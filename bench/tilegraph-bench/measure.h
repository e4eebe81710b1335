#pragma once
// Timing through Google Benchmark: each measurement is a registered benchmark run with several
// repetitions, of which we keep the median (this machine is noisy) plus min and max.
#include <functional>
#include <string>

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

}  // namespace tg::bench
