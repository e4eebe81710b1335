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

double median_of(std::vector<double> v);

// Memory read bandwidth: summing a large f32 array, split evenly over the threads. Each thread
// reads its part as kBandwidthStreams interleaved sequential streams, as a mat-vec kernel reads
// several weight rows at once: one stream alone leaves the hardware prefetchers ~15% short of
// what several get (measured on this machine: ~9.4 GB/s for 1 stream, ~10.9 for 8).
inline constexpr int kBandwidthStreams = 8;
// Bytes per second reading `n` floats at `data` (a buffer far larger than the caches) on
// `threads` threads, median of `runs`.
double read_bandwidth(const float* data, size_t n, int threads, int runs);

}  // namespace tg::bench
