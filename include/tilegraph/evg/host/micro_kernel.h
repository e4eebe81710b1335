#pragma once
// The register-blocked micro-kernel: one tile of up to kTileRows x kTileCols outputs summed over
// a packed K block with one FMA per accumulator per k.
//
//   c[i * ldc + j] (+)= sum_k a[i * lda + k] * b[k * kTileCols + j],  i < rows, j < kTileCols
//
// `a` holds the rows of A, lda apart (broadcast one value at a time): a packed A panel, or A
// itself where it can be read in place (block_mmad.h); `b` is a packed B panel (kTileCols values
// per k, vector loads). The tile sizes fill the register file: AVX-512 12 x 32 (24 zmm
// accumulators, 2 B vectors and a broadcast: 27 of 32), AVX2 6 x 16 (12 ymm accumulators, 15 of
// 16), portable 4 x 8. Panels with fewer rows (the bottom edge of A) get a kernel compiled for
// exactly that many rows rather than a full tile with wasted lanes.
//
// Where the target has a bf16 dot-product instruction (TG_EVG_TARGET_BF16_DOT), a second kernel
// takes panels of bf16 pairs: each 32-bit element of a and b holds two consecutive values of K,
// and one instruction adds both products (block_mmad.h packs such panels for bf16 x bf16).
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "tilegraph/evg/host/vector.h"

namespace tg::evg::host {
inline namespace TG_EVG_TARGET_NAMESPACE {

#if defined(TG_EVG_TARGET_AVX512)
inline constexpr int kTileRows = 12;
inline constexpr int kTileVectors = 2;
#elif defined(TG_EVG_TARGET_AVX2)
inline constexpr int kTileRows = 6;
inline constexpr int kTileVectors = 2;
#else
inline constexpr int kTileRows = 4;
inline constexpr int kTileVectors = 8;
#endif
inline constexpr int kTileCols = kTileVectors * Vec::kLanes;
// How far ahead along the packed B panel the micro-kernel requests lines into L1.
inline constexpr int kPrefetchBytes = 2048;

using MicroKernel = void (*)(int64_t kc, const float* a, int64_t lda, const float* b, float* c, int64_t ldc,
                             bool accumulate);

// kBf16Pairs: a and b hold bf16 pairs and kc counts pairs.
template <int kRows, bool kBf16Pairs>
void micro_kernel(int64_t kc, const float* __restrict a, int64_t lda, const float* __restrict b, float* __restrict c,
                  int64_t ldc, bool accumulate) {
  using F = Vec::F;
  constexpr int kV = kTileVectors, kL = Vec::kLanes;
  F acc[kRows][kV];
#pragma GCC unroll 16
  for (int i = 0; i < kRows; ++i) {
#pragma GCC unroll 8
    for (int v = 0; v < kV; ++v) acc[i][v] = Vec::zero();
    // The tile of c is read back at the end, by then from L1 instead of the L3 a block's
    // accumulator mostly lives in.
    if (accumulate) {
#pragma GCC unroll 4
      for (int line = 0; line < kTileCols * int(sizeof(float)); line += 64) {
        __builtin_prefetch(reinterpret_cast<const char*>(c + i * ldc) + line, 1, 3);
      }
    }
  }
  // The rows of A are addressed from one base per 3 rows plus lda and 2 * lda (x86's scaled
  // index): 4 bases and one index register for 12 rows. Addressed as a + i * lda, GCC kept the
  // row offsets on the stack and reloaded them every step, and on Sapphire Rapids, whose two
  // 512-bit FMA ports leave no slack for those uops, the kernel ran at 89% of the FMA peak
  // instead of 99% (a 12 x 32 tile over 8 B panels in L2).
  constexpr int kBases = (kRows + 2) / 3;
  const float* row_base[kBases];
#pragma GCC unroll 4
  for (int r = 0; r < kBases; ++r) row_base[r] = a + 3 * r * lda;
#pragma GCC unroll 2
  for (int64_t k = 0; k < kc; ++k) {
    // The B panel streams from L2; the hardware prefetchers alone leave the FMAs waiting on it
    // (measured: 118 against 143 GFLOP/s of a 150 peak).
#pragma GCC unroll 4
    for (int line = 0; line < kTileCols * int(sizeof(float)); line += 64) {
      __builtin_prefetch(reinterpret_cast<const char*>(b) + kPrefetchBytes + line, 0, 3);
    }
    F bv[kV];
#pragma GCC unroll 8
    for (int v = 0; v < kV; ++v) bv[v] = Vec::load(b + v * kL);
#pragma GCC unroll 16
    for (int i = 0; i < kRows; ++i) {
      const F ai = Vec::set1(row_base[i / 3][(i % 3) * lda]);
#pragma GCC unroll 8
      for (int v = 0; v < kV; ++v) {
#if defined(TG_EVG_TARGET_BF16_DOT)
        if constexpr (kBf16Pairs) {
          acc[i][v] = Vec::dot_bf16_pairs(ai, bv[v], acc[i][v]);
          continue;
        }
#endif
        acc[i][v] = Vec::fmadd(ai, bv[v], acc[i][v]);
      }
    }
#pragma GCC unroll 4
    for (int r = 0; r < kBases; ++r) ++row_base[r];
    b += kTileCols;
  }
#pragma GCC unroll 16
  for (int i = 0; i < kRows; ++i) {
#pragma GCC unroll 8
    for (int v = 0; v < kV; ++v) {
      float* out = c + i * ldc + v * kL;
      Vec::store(out, accumulate ? Vec::add(acc[i][v], Vec::load(out)) : acc[i][v]);
    }
  }
}

template <bool kBf16Pairs, size_t... kIndex>
constexpr std::array<MicroKernel, sizeof...(kIndex)> micro_kernel_table(std::index_sequence<kIndex...>) {
  return {micro_kernel<int(kIndex) + 1, kBf16Pairs>...};
}

// The kernel for a panel of `rows` (1 .. kTileRows) rows; of bf16 pairs only where kHasBf16Dot.
inline MicroKernel micro_kernel_for(int rows, bool bf16_pairs = false) {
  static constexpr auto kFloat = micro_kernel_table<false>(std::make_index_sequence<kTileRows>());
  if constexpr (kHasBf16Dot) {
    static constexpr auto kPairs = micro_kernel_table<true>(std::make_index_sequence<kTileRows>());
    if (bf16_pairs) return kPairs[size_t(rows - 1)];
  }
  return kFloat[size_t(rows - 1)];
}

}  // namespace TG_EVG_TARGET_NAMESPACE
}  // namespace tg::evg::host
