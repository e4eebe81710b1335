#include "bandwidth.h"

#include <immintrin.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <thread>

#include "measure.h"
#include "tilegraph/core/context.h"
#include "tilegraph/core/error.h"

namespace tg::bench {

namespace {

// Bytes ahead of each stream that the prefetching kernels request: far enough to cover DRAM
// latency (~100 ns at ~10 GB/s per core is ~1 KiB), near enough to stay in L1.
constexpr size_t kPrefetchBytes = 2048;
// Bytes per stream per step: eight 32-byte loads.
constexpr size_t kStep = 256;

// Integer adds of 32-byte loads into eight accumulators keep far ahead of DRAM and cannot meet
// a NaN.
__attribute__((target("avx2"))) inline __m256i add_line(__m256i acc, const char* p) {
  return _mm256_add_epi32(acc, _mm256_load_si256(reinterpret_cast<const __m256i*>(p)));
}

// Reads [p, p + n) as `streams` interleaved sequential streams (a mat-vec kernel reads several
// weight rows at once). Returns the bytes read (whole steps of every stream) and a sum of them in
// `sink`, so the loads cannot be optimised away.
template <int kStreams, bool kPrefetch>
__attribute__((target("avx2"))) size_t read_streams(const char* p, size_t n, int& sink) {
  __m256i acc[8];
  for (auto& a : acc) a = _mm256_setzero_si256();
  const size_t per = n / kStreams / kStep * kStep;
  for (size_t i = 0; i < per; i += kStep) {
    for (int s = 0; s < kStreams; ++s) {
      const char* q = p + size_t(s) * per + i;
      if constexpr (kPrefetch) {
        for (size_t line = 0; line < kStep; line += 64) _mm_prefetch(q + kPrefetchBytes + line, _MM_HINT_T0);
      }
      for (size_t k = 0; k < 8; ++k) acc[k] = add_line(acc[k], q + 32 * k);
    }
  }
  for (int k = 1; k < 8; ++k) acc[0] = _mm256_add_epi32(acc[0], acc[k]);
  sink += _mm256_extract_epi32(acc[0], 0) + _mm256_extract_epi32(acc[0], 7);
  return per * kStreams;
}

using ReadFn = size_t (*)(const char*, size_t, int&);

struct ReadKernel {
  const char* name;
  ReadFn read;
};

constexpr ReadKernel kReadKernels[] = {
    {"1 stream", read_streams<1, false>},  {"1 stream + prefetch", read_streams<1, true>},
    {"4 streams", read_streams<4, false>}, {"4 streams + prefetch", read_streams<4, true>},
    {"8 streams", read_streams<8, false>}, {"8 streams + prefetch", read_streams<8, true>},
};

volatile int g_sink;

size_t cache_size_from_sysfs() {
  size_t best = 0;
  for (int index = 0; index < 8; ++index) {
    char path[64];
    std::snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", index);
    std::ifstream in(path);
    size_t value = 0;
    if (!(in >> value)) continue;
    const int unit = in.peek();
    best = std::max(best, value << (unit == 'K' ? 10 : unit == 'M' ? 20 : 0));
  }
  return best;
}

}  // namespace

ReadBandwidth::ReadBandwidth() {
  // A VM's CPUID may report the whole host's L3 while sysfs reports the slice of one CCX: the
  // larger one keeps the buffer out of either.
  const long cpuid_llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
  llc_bytes_ = std::max(cache_size_from_sysfs(), cpuid_llc > 0 ? size_t(cpuid_llc) : size_t(0));
  const size_t mib = size_t(1) << 20;
  bytes_ = std::max(512 * mib, (4 * llc_bytes_ + 2 * mib - 1) / (2 * mib) * (2 * mib));
  data_ = static_cast<char*>(aligned_alloc_bytes(bytes_, 2 * mib));
  std::memset(data_, 1, bytes_);
}

ReadBandwidth::~ReadBandwidth() { aligned_free_bytes(data_); }

std::vector<ReadKernelRate> ReadBandwidth::measure_kernels(int threads, int runs) const {
  if (!__builtin_cpu_supports("avx2")) throw Error("bench: the read-bandwidth kernels need AVX2");
  constexpr size_t kKernels = std::size(kReadKernels);
  std::vector<std::vector<double>> rates(kKernels);
  for (int r = 0; r < runs; ++r) {
    for (size_t k = 0; k < kKernels; ++k) {
      const ReadFn read = kReadKernels[k].read;
      // Each thread's part starts on a 4 KiB page, so no two threads share a line.
      const size_t per = bytes_ / size_t(threads) / 4096 * 4096;
      std::vector<size_t> read_bytes(size_t(threads), 0);
      std::vector<int> sinks(size_t(threads), 0);
      const auto start = std::chrono::steady_clock::now();
      std::vector<std::thread> workers;
      for (int t = 1; t < threads; ++t) {
        workers.emplace_back([&, t] { read_bytes[size_t(t)] = read(data_ + per * size_t(t), per, sinks[size_t(t)]); });
      }
      read_bytes[0] = read(data_, per, sinks[0]);
      for (std::thread& w : workers) w.join();
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      size_t total = 0;
      for (int t = 0; t < threads; ++t) {
        total += read_bytes[size_t(t)];
        g_sink = g_sink + sinks[size_t(t)];
      }
      rates[k].push_back(double(total) / s);
    }
  }
  std::vector<ReadKernelRate> out;
  for (size_t k = 0; k < kKernels; ++k) out.push_back({kReadKernels[k].name, median_of(rates[k])});
  return out;
}

double ReadBandwidth::measure(int threads, int runs) const {
  double best = 0;
  for (const ReadKernelRate& k : measure_kernels(threads, runs)) best = std::max(best, k.bytes_per_s);
  return best;
}

std::string ReadBandwidth::describe() const {
  char text[160];
  std::snprintf(text, sizeof text,
                "best of 6 read kernels (1, 4, 8 streams per thread, with and without prefetch, AVX2 loads) over %zu "
                "MiB, LLC %zu MiB",
                bytes_ >> 20, llc_bytes_ >> 20);
  return text;
}

}  // namespace tg::bench
