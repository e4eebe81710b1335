#include "bandwidth.h"

#include <immintrin.h>

#include <chrono>
#include <thread>
#include <vector>

#include "measure.h"
#include "tilegraph/core/context.h"

namespace tg::bench {

namespace {

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

volatile float g_sink;  // keeps the sums, so the reads cannot be optimised away

}  // namespace

ReadBandwidth::ReadBandwidth() : n_((size_t(512) << 20) / sizeof(float)) {
  data_ = static_cast<float*>(aligned_alloc_bytes(n_ * sizeof(float)));
  for (size_t i = 0; i < n_; ++i) data_[i] = 1.0f;
}

ReadBandwidth::~ReadBandwidth() { aligned_free_bytes(data_); }

double ReadBandwidth::measure(int threads, int runs) const {
  std::vector<double> rates;
  for (int r = 0; r < runs; ++r) {
    std::vector<float> partial(size_t(threads), 0.0f);
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> workers;
    const size_t per = n_ / size_t(threads);
    for (int t = 1; t < threads; ++t) {
      workers.emplace_back([&, t] {
        const size_t end = t == threads - 1 ? n_ : per * size_t(t + 1);
        partial[size_t(t)] = sum_floats(data_ + per * size_t(t), end - per * size_t(t));
      });
    }
    partial[0] = sum_floats(data_, threads == 1 ? n_ : per);
    for (std::thread& w : workers) w.join();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    float total = 0;
    for (float p : partial) total += p;
    g_sink = total;
    rates.push_back(double(n_ * sizeof(float)) / s);
  }
  return median_of(rates);
}

}  // namespace tg::bench
