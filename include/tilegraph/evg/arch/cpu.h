#pragma once
// The CPU architecture policy of the EVG templates. The simulator will add its own (SPM buffers,
// CGRA vector instructions, LSU loads and stores with event sync) with the same members.
//
//   kLanes         f32 lanes per vector: 16 for AVX-512, 8 for AVX2, 4 for SSE; 1 is scalar.
//                  Must match what the including file is compiled for to run fast (JIT kernels
//                  are compiled under the matching `#pragma GCC target`).
//   kLoadStages    2 (the default): the LOAD phase of the next sub-tile runs before the COMPUTE
//                  phase of this one, into the other set of load buffers (double buffering: on
//                  a CPU it only issues the next tile's loads early; on a unit with a DMA engine
//                  they overlap compute); 1: load, compute, store one sub-tile at a time in one
//                  set of buffers.
//   kFuseCompute   true: the tile-extent compute nodes of a sub-tile run as one loop with their
//                  values in registers (what a CPU wants: one pass over L1-resident data);
//                  false: node at a time over scratch buffers, as a vector unit with a scratchpad
//                  runs (CpuStaged; also the model of the simulator's schedule).
//   Scratch        per-thread arenas: cache-resident buffers, allocated and zeroed once per
//                  epilogue (never per block), or placed in memory the caller keeps across
//                  runs; 64-byte aligned and apart.
#include <cstddef>
#include <cstring>
#include <memory>
#include <new>

#if defined(__AVX512F__)
#define TG_EVG_NATIVE_LANES 16
#elif defined(__AVX__)
#define TG_EVG_NATIVE_LANES 8
#else
#define TG_EVG_NATIVE_LANES 4
#endif

namespace tg::evg::arch {

class CpuScratch {
 public:
  static constexpr size_t kAlignment = 64;

  // Bytes the arenas of `threads` threads take in memory supplied by the caller.
  static constexpr size_t bytes(size_t bytes_per_thread, int threads) {
    return stride(bytes_per_thread) * size_t(threads > 0 ? threads : 1);
  }

  // Allocates the arenas.
  CpuScratch(size_t bytes_per_thread, int threads)
      : stride_(stride(bytes_per_thread)),
        owned_(
            static_cast<std::byte*>(::operator new[](bytes(bytes_per_thread, threads), std::align_val_t(kAlignment)))),
        data_(owned_.get()) {
    // Padding lanes of scratch tiles are computed on but never stored: zero them once so they
    // hold ordinary numbers.
    std::memset(data_, 0, bytes(bytes_per_thread, threads));
  }

  // The arenas in `memory` (bytes(bytes_per_thread, threads) of it, kAlignment-aligned), which
  // the caller keeps for repeated runs: zeroed before the first, afterwards holding what earlier
  // runs of the same epilogue left (ordinary numbers), so nothing is allocated or cleared here.
  CpuScratch(std::byte* memory, size_t bytes_per_thread) : stride_(stride(bytes_per_thread)), data_(memory) {}

  std::byte* thread(int t) const { return data_ + size_t(t) * stride_; }

 private:
  struct Free {
    void operator()(std::byte* p) const { ::operator delete[](p, std::align_val_t(kAlignment)); }
  };
  static constexpr size_t stride(size_t bytes_per_thread) {
    return (bytes_per_thread + kAlignment - 1) / kAlignment * kAlignment + kAlignment;
  }
  size_t stride_;
  std::unique_ptr<std::byte[], Free> owned_;
  std::byte* data_;
};

template <int Lanes = TG_EVG_NATIVE_LANES, bool FuseCompute = true, int LoadStages = 2>
struct Cpu {
  static_assert(Lanes >= 1 && Lanes <= 16 && (Lanes & (Lanes - 1)) == 0, "CPU lanes: 1, 2, 4, 8 or 16");
  static_assert(LoadStages == 1 || LoadStages == 2, "CPU load stages: 1 or 2");
  static constexpr int kLanes = Lanes;
  static constexpr int kLoadStages = LoadStages;
  static constexpr bool kFuseCompute = FuseCompute;
  using Scratch = CpuScratch;
};

// Node at a time over scratch buffers reused by liveness.
template <int Lanes = TG_EVG_NATIVE_LANES>
using CpuStaged = Cpu<Lanes, false>;

}  // namespace tg::evg::arch
