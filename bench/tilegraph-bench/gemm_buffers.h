#pragma once
// What the gemm suite's sections share: aligned f32 buffers, their random contents and how
// results are compared, and how long idle peer workers take to go to sleep.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>

#include "tilegraph/core/context.h"

namespace tg::bench {

struct AlignedFloats {
  explicit AlignedFloats(size_t n)
      : size(n), data(static_cast<float*>(aligned_alloc_bytes(std::max<size_t>(n, 1) * sizeof(float), 64))) {}
  ~AlignedFloats() { aligned_free_bytes(data); }
  AlignedFloats(const AlignedFloats&) = delete;
  AlignedFloats& operator=(const AlignedFloats&) = delete;
  size_t size;
  float* data;
};

inline void fill_random(AlignedFloats& v, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (size_t i = 0; i < v.size; ++i) v.data[i] = dist(rng);
}

// max |got - want| / max |want|.
inline double max_relative_difference(const AlignedFloats& got, const AlignedFloats& want) {
  double diff = 0, scale = 0;
  for (size_t i = 0; i < want.size; ++i) {
    diff = std::max(diff, double(std::fabs(got.data[i] - want.data[i])));
    scale = std::max(scale, double(std::fabs(want.data[i])));
  }
  return scale > 0 ? diff / scale : diff;
}

// Between libraries on 2 threads the suite pauses this long, so that the previous library's idle
// workers (OpenBLAS's spin for up to ~0.1 s) have gone to sleep.
constexpr double kIdleWorkersSettle_s = 0.15;

}  // namespace tg::bench
