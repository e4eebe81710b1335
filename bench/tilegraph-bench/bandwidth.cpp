#include "bandwidth.h"

#include <immintrin.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>
#include <string>
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

// The last-level cache the OS describes: the highest cache level of the online CPUs, each
// instance (a set of CPUs sharing it, shared_cpu_list) counted once, so the sum is what all
// threads of the process together can hold. 0 if sysfs says nothing.
size_t llc_from_sysfs() {
  int top_level = 0;
  size_t total = 0;
  std::set<std::string> instances;
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  for (long cpu = 0; cpu < cpus; ++cpu) {
    for (int index = 0; index < 8; ++index) {
      const std::string dir =
          "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/cache/index" + std::to_string(index) + "/";
      std::ifstream level_file(dir + "level"), size_file(dir + "size"), shared_file(dir + "shared_cpu_list");
      int level = 0;
      size_t value = 0;
      std::string shared;
      if (!(level_file >> level) || !(size_file >> value) || !(shared_file >> shared) || level < top_level) continue;
      const int unit = size_file.peek();
      const size_t bytes = value << (unit == 'K' ? 10 : unit == 'M' ? 20 : 0);
      if (level > top_level) {
        top_level = level;
        total = 0;
        instances.clear();
      }
      if (instances.insert(shared).second) total += bytes;
    }
  }
  return total;
}

}  // namespace

ReadBandwidth::ReadBandwidth() {
  // sysfs first: it describes each cache instance and the CPUs that share it. glibc's CPUID figure
  // is, on AMD, the whole package's L3 (CPUID 0x80000006), of which one core reaches only its
  // CCX's slice (a 2-core Zen 3 VM: 256 MiB by CPUID, one 32 MiB instance in sysfs).
  const long cpuid_llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
  const size_t sysfs_llc = llc_from_sysfs();
  llc_bytes_ = sysfs_llc > 0 ? sysfs_llc : cpuid_llc > 0 ? size_t(cpuid_llc) : 0;
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

double ReadBandwidth::warm_rate(size_t bytes) const {
  bytes = std::min(bytes, bytes_) / 4096 * 4096;
  int sink = 0;
  double best = 0;
  for (int pass = 0; pass < 3; ++pass) {
    for (const ReadKernel& kernel : kReadKernels) {
      const auto start = std::chrono::steady_clock::now();
      const size_t read = kernel.read(data_, bytes, sink);
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (pass > 0) best = std::max(best, double(read) / s);
    }
  }
  g_sink = g_sink + sink;
  return best;
}

bool ReadBandwidth::bound_applies(double bytes) const {
  if (bytes >= 4.0 * double(llc_bytes_)) return true;
  const size_t size = size_t(bytes);
  const auto known = from_dram_.find(size);
  if (known != from_dram_.end()) return known->second;
  if (dram_rate_ == 0) dram_rate_ = warm_rate(bytes_);
  const bool from_dram = warm_rate(size) <= 1.25 * dram_rate_;
  from_dram_.emplace(size, from_dram);
  return from_dram;
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
