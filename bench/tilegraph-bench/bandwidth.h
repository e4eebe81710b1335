#pragma once
// Memory read bandwidth, the denominator of every "bandwidth bound" in the suites: summing a
// 512 MiB f32 array, split evenly over the threads. Each thread reads its part as
// kBandwidthStreams interleaved sequential streams, as a mat-vec kernel reads several weight rows
// at once: one stream alone leaves the hardware prefetchers ~15% short of what several get
// (measured on this machine: ~9.4 GB/s for 1 stream, ~10.9 for 8).
#include <cstddef>

namespace tg::bench {

inline constexpr int kBandwidthStreams = 8;

class ReadBandwidth {
 public:
  ReadBandwidth();  // allocates and touches the array
  ReadBandwidth(const ReadBandwidth&) = delete;
  ReadBandwidth& operator=(const ReadBandwidth&) = delete;
  ~ReadBandwidth();

  // Bytes per second with `threads` threads, the median of `runs` passes over the array.
  double measure(int threads, int runs) const;

 private:
  float* data_;
  size_t n_;
};

}  // namespace tg::bench
