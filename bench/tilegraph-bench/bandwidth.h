#pragma once
// Memory read bandwidth, the denominator of every "bandwidth bound" in the suites. No single way
// of reading reaches the peak on every CPU (on Zen 3 one sequential stream per core leaves the
// hardware prefetchers short of what several interleaved streams get; elsewhere software
// prefetch helps), so the bound is the best of several read kernels: AVX2 loads of 1, 4 and 8 interleaved sequential
// streams per thread, each with and without software prefetch, over a buffer of at least 4x the last-level cache and
// 512 MiB, split evenly over the threads. A kernel that beats the bound would have to read faster than all of these.
#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace tg::bench {

struct ReadKernelRate {
  std::string name;  // e.g. "8 streams + prefetch"
  double bytes_per_s;
};

class ReadBandwidth {
 public:
  ReadBandwidth();  // allocates and touches the buffer
  ReadBandwidth(const ReadBandwidth&) = delete;
  ReadBandwidth& operator=(const ReadBandwidth&) = delete;
  ~ReadBandwidth();

  // Each read kernel with `threads` threads, the median of `runs` passes over the buffer each
  // (the kernels take turns, so load changes hit all of them).
  std::vector<ReadKernelRate> measure_kernels(int threads, int runs) const;
  // Bytes per second: the best of measure_kernels(threads, runs).
  double measure(int threads, int runs) const;

  size_t buffer_bytes() const { return bytes_; }
  // The last-level cache the process's threads can hold together: the sum of the instances of the
  // highest cache level sysfs lists (each once), else CPUID's L3 (0 if neither says).
  size_t llc_bytes() const { return llc_bytes_; }
  // Whether `bytes` of weights, read again and again, come from DRAM, so that the bound applies
  // to them: at least 4x the LLC, or, below that, a buffer of that size read warm by one thread
  // no faster than 1.25x the whole buffer. A VM may list its host's whole L3 (480 MiB on one
  // 2-core Sapphire Rapids guest) of which it holds far less; the second test measures what the
  // cache size only suggests. Measured once per size.
  bool bound_applies(double bytes) const;
  // One line for a suite's header: the method, the buffer and the cache size.
  std::string describe() const;

 private:
  // The best read kernel's rate over the first `bytes` of the buffer, one thread, after a pass
  // that brings into cache whatever fits.
  double warm_rate(size_t bytes) const;

  char* data_;
  size_t bytes_;
  size_t llc_bytes_;
  mutable std::map<size_t, bool> from_dram_;
  mutable double dram_rate_ = 0;
};

}  // namespace tg::bench
