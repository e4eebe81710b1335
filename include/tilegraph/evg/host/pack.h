#pragma once
// Packing (GotoBLAS/BLIS): copies of A and B reordered so that the micro-kernel reads both
// operands as contiguous streams, converted to f32 on the way (f16/bf16 inputs), and padded so
// that the micro-kernel never needs an edge case along N.
//
//   A panel: `rows` (<= kTileRows) rows of A over kc values of K, row by row: a[i * kc + k].
//   B panel: kTileCols columns of B over kc values of K, k-major: b[k * kTileCols + j]; columns
//            past the matrix are zero.
//
// An operand whose packed order runs across its storage order (A column-major, B column-major)
// is transposed through registers, one Vec::kLanes square at a time.
#include <algorithm>
#include <cstdint>

#include "tilegraph/evg/host/micro_kernel.h"
#include "tilegraph/evg/host/vector.h"

namespace tg::evg::host {
inline namespace TG_EVG_TARGET_NAMESPACE {

namespace detail {

// Loads Vec::kLanes vectors, vector i holding elements [k0, k0 + kn) of storage line
// (line0 + i) (a row of a row-major matrix or a column of a column-major one), and transposes
// them; lines past line0 + lines are zero. Afterwards r[t] holds element k0 + t of each line.
// With `prefetch` > 0, the same elements `prefetch` further along each line are requested too.
// Its loops, Vec::transpose's and the stores after it are unrolled so that r stays in registers:
// rolled, GCC kept r on the stack, and a 3072 x 768 transposing pack took twice as long.
TG_EVG_INLINE void load_transposed(const MatrixOperand& m, int64_t line0, int lines, int64_t k0, int kn,
                                   int64_t prefetch, Vec::F r[Vec::kLanes]) {
#pragma GCC unroll 16
  for (int i = 0; i < Vec::kLanes; ++i) {
    if (i >= lines) {
      r[i] = Vec::zero();
      continue;
    }
    const void* p = element_address(m.data, m.type, (line0 + i) * m.ld + k0);
    if (prefetch > 0) __builtin_prefetch(element_address(p, m.type, prefetch), 0, 2);
    r[i] = kn == Vec::kLanes ? Vec::load(p, m.type) : Vec::load_n(p, m.type, kn);
  }
  Vec::transpose(r);
}

}  // namespace detail

// Packs rows [r0, r0 + rows) of A (rows <= kTileRows) over K range [k0, k0 + kc) into `panel`,
// row by row: panel[i * kc + k]. With `prefetch_kc` > 0, the next K range (of that length) is
// requested from memory on the way, as for B below.
inline void pack_a_panel(const MatrixOperand& a, int64_t r0, int rows, int64_t k0, int64_t kc, float* panel,
                         int64_t prefetch_kc = 0) {
  constexpr int kL = Vec::kLanes;
  if (!a.transposed) {
    // Row-major: each row is a copy, converted to f32.
    for (int i = 0; i < rows; ++i) {
      const int64_t base = (r0 + i) * a.ld + k0;
      for (int64_t k = 0; k < kc; k += kL) {
        const int n = int(std::min<int64_t>(kL, kc - k));
        const void* p = element_address(a.data, a.type, base + k);
        if (k < prefetch_kc) __builtin_prefetch(element_address(p, a.type, kc), 0, 2);
        Vec::store_n(panel + i * kc + k, n == kL ? Vec::load(p, a.type) : Vec::load_n(p, a.type, n), n);
      }
    }
    return;
  }
  // Column-major: the rows of one k are adjacent; transpose kL values of K x kL rows at a time.
  for (int i = 0; i < rows; i += kL) {
    const int lines = std::min(kL, rows - i);
    for (int64_t k = 0; k < kc; k += kL) {
      const int kn = int(std::min<int64_t>(kL, kc - k));
      for (int t = 0; t < kn && k + t < prefetch_kc; ++t) {
        __builtin_prefetch(element_address(a.data, a.type, (k0 + k + t + kc) * a.ld + r0 + i), 0, 2);
      }
      Vec::F r[kL];
      detail::load_transposed(a, k0 + k, kn, r0 + i, lines, 0, r);
#pragma GCC unroll 16
      for (int t = 0; t < kL; ++t) {
        if (t < lines) Vec::store_n(panel + (i + t) * kc + k, r[t], kn);
      }
    }
  }
}

// Packs columns [c0, c0 + cols) of B over K range [k0, k0 + kc) into ceil(cols / kTileCols)
// consecutive panels of kc * kTileCols floats. With `prefetch_kc` > 0, the next K range (of that
// length) is requested from memory on the way, so that packing it later finds it in cache
// instead of waiting on short strided reads.
inline void pack_b_panels(const MatrixOperand& b, int64_t k0, int64_t kc, int64_t c0, int64_t cols, float* panels,
                          int64_t prefetch_kc = 0) {
  constexpr int kL = Vec::kLanes;
  const int64_t n_panels = (cols + kTileCols - 1) / kTileCols;
  if (!b.transposed) {
    // Row-major: each k contributes kTileCols adjacent values per panel.
    for (int64_t k = 0; k < kc; ++k) {
      const int64_t base = (k0 + k) * b.ld + c0;
      const bool ahead = k < prefetch_kc;  // row k of the next range exists
      for (int64_t p = 0; p < n_panels; ++p) {
        float* out = panels + (p * kc + k) * kTileCols;
        for (int v = 0; v < kTileCols; v += kL) {
          const int64_t j = p * kTileCols + v;
          const int n = int(std::clamp<int64_t>(cols - j, 0, kL));
          const void* src = element_address(b.data, b.type, base + j);
          if (ahead && n > 0) __builtin_prefetch(element_address(src, b.type, kc * b.ld), 0, 2);
          Vec::store(out + v, n == kL ? Vec::load(src, b.type) : n > 0 ? Vec::load_n(src, b.type, n) : Vec::zero());
        }
      }
    }
    return;
  }
  // Column-major: transpose kL columns x kL values of K at a time. Each column contributes only
  // kc values, too short a stream for the hardware prefetchers to catch up with, so the same
  // values of the next kL columns are requested into L2 while these are transposed (a 256 x
  // 3072 x 768 GEMM with B stored N x K: pack 11% -> 7% of its time, +3% overall).
  for (int64_t p = 0; p < n_panels; ++p) {
    float* panel = panels + p * kc * kTileCols;
    for (int v = 0; v < kTileCols; v += kL) {
      const int64_t j = p * kTileCols + v;
      const int lines = int(std::clamp<int64_t>(cols - j, 0, kL));
      const int next_lines = int(std::clamp<int64_t>(cols - j - kL, 0, kL));
      for (int64_t k = 0; k < kc; k += kL) {
        const int kn = int(std::min<int64_t>(kL, kc - k));
        for (int i = 0; i < next_lines; ++i) {
          __builtin_prefetch(element_address(b.data, b.type, (c0 + j + kL + i) * b.ld + k0 + k), 0, 2);
        }
        Vec::F r[kL];
        detail::load_transposed(b, c0 + j, lines, k0 + k, kn, k < prefetch_kc ? kc : 0, r);
#pragma GCC unroll 16
        for (int t = 0; t < kL; ++t) {
          if (t < kn) Vec::store(panel + (k + t) * kTileCols + v, r[t]);
        }
      }
    }
  }
}

}  // namespace TG_EVG_TARGET_NAMESPACE
}  // namespace tg::evg::host
