#pragma once
// The few-row path (decode: M = 1, small batches: M <= kGemvMaxRows with a column-major B, as a
// model stores its weights). Each element of B is used at most a few times, so the work is bound
// by reading B from memory: packing it would only add traffic. B is read straight from its
// storage, converted to f32 in registers, in a few long sequential streams (one per column)
// that keep the hardware prefetchers busy, against the rows of A held as contiguous f32.
//
// Long columns are also prefetched in software, one tile of columns ahead: a column of 2 KiB or
// more spans whole pages, and the hardware prefetchers stop at a page's end, so every new
// column started cold. Prefetching it into L2 while the tile before it is read took a d_model
// 2048 f16 decode from ~82 to ~110 tokens/s on one core (bench/RESULTS.md, model). Short
// columns (a small model's weights, resident in L2) skip it: there the extra instructions cost
// ~7% of a decode step. The caller may have the tile after the next prefetched as well
// (GemmTuning::b_prefetch_tiles): on Zen 4 that took the same f16 decode ~1.2x faster, where
// prefetching only two tiles ahead did nothing.
//
// The caller may have long columns read one at a time instead (GemmTuning::
// streams_b_in_one_pass, kernel/tiling.h): B's columns are contiguous, so B is then one stream
// from front to back, the next column prefetched as the last is read. Short columns keep their
// tiles: there a horizontal sum per column instead of one per tile left a tiny f16 model's
// decode (columns under 1 KiB, in cache) at ~0.7x.
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "tilegraph/evg/host/vector.h"
#include "tilegraph/evg/kernel/tiling.h"

namespace tg::evg::host {
inline namespace TG_EVG_TARGET_NAMESPACE {

// Rows of A up to which a column-major B is streamed rather than packed.
inline constexpr int kGemvMaxRows = 8;
// Columns of B streamed at once (fewer with many rows, to keep the accumulators in registers);
// one row of A reads long columns GemmTuning::b_tile_columns (4 or 8) at once.
inline constexpr int kGemvColumns = 4;
inline constexpr int kGemvWideColumns = 8;

// The columns of a tile for `rows` rows of A under `tuning`: what blocks must be whole tiles of.
inline int64_t gemv_tile_columns(int64_t rows, const GemmTuning& tuning) {
  return rows == 1 && tuning.b_tile_columns == kGemvWideColumns ? kGemvWideColumns : kGemvColumns;
}

namespace detail {

#if defined(TG_EVG_TARGET_AVX512)
inline constexpr int kGemvAccumulators = 24;  // of 32 zmm: the rest hold B and A vectors
#else
inline constexpr int kGemvAccumulators = 12;  // of 16 ymm
#endif

// Columns per group for `rows` rows of A.
constexpr int gemv_columns(int rows) { return std::clamp(kGemvAccumulators / rows, 1, kGemvColumns); }

// Bytes of one column of B from which the next tile's columns are prefetched.
inline constexpr int64_t kGemvPrefetchColumnBytes = 2048;

// out[r * ld + c] = x_r . column (c0 + c) of a column-major B of element type kType (b.type),
// for r < kRows, c < kColumns, where x_r = x + r * k_len. With few accumulators, two per output
// split K so that the FMA chains overlap. kPrefetchTiles (0, 1 or 2): also prefetch the same
// part of the next tile's columns into L2, and with 2 that of the tile after it. The type is a
// template argument because a run-time one leaves a branch on it beside every load: on a B
// resident in cache (a small model's weights) that cost an f32 GEMV ~40% of its time. X is
// float, or with a bf16 dot product (kHasBf16Dot) uint16_t: bf16 rows of A against a bf16 B,
// multiplied in pairs, a vector holding 2 * kLanes of K.
template <int kRows, int kColumns, int kPrefetchTiles, ElementType kType, class X>
TG_EVG_INLINE void dot_tile(const X* x, const MatrixOperand& b, int64_t k_len, int64_t c0, float* out, int64_t ld) {
  constexpr bool kPairs = std::is_same_v<X, uint16_t>;
  static_assert(!kPairs || (kHasBf16Dot && kType == ElementType::BF16));
  constexpr int kL = kPairs ? 2 * Vec::kLanes : Vec::kLanes;  // K per vector
  constexpr int kSets = 2 * kRows * kColumns <= kGemvAccumulators ? 2 : 1;
  const void* column[kColumns];
  for (int c = 0; c < kColumns; ++c) column[c] = element_address(b.data, kType, (c0 + c) * b.ld);
  const int64_t next_tile = kColumns * b.ld;
  // n values of K (kL: a whole vector) at p, of a column of B or a row of A (`type`), and their
  // products added to acc. Pairs are loaded as the bf16 they are.
  const auto load = [](const void* p, ElementType type, int n) {
#if defined(TG_EVG_TARGET_BF16_DOT)
    if constexpr (kPairs) {
      const auto* bits = static_cast<const uint16_t*>(p);
      return n == kL ? Vec::load_bf16(bits) : Vec::load_bf16_n(bits, n);
    }
#endif
    return n == kL ? Vec::load(p, type) : Vec::load_n(p, type, n);
  };
  const auto multiply_add = [](Vec::F xr, Vec::F bv, Vec::F acc) {
#if defined(TG_EVG_TARGET_BF16_DOT)
    if constexpr (kPairs) return Vec::dot_bf16_pairs(xr, bv, acc);
#endif
    return Vec::fmadd(xr, bv, acc);
  };
  Vec::F acc[kSets][kRows][kColumns];
  for (int s = 0; s < kSets; ++s) {
    for (int r = 0; r < kRows; ++r) {
      for (int c = 0; c < kColumns; ++c) acc[s][r][c] = Vec::zero();
    }
  }
  int64_t k = 0;
  for (; k + kSets * kL <= k_len; k += kSets * kL) {
#pragma GCC unroll 2
    for (int s = 0; s < kSets; ++s) {
      Vec::F bv[kColumns];
#pragma GCC unroll 8
      for (int c = 0; c < kColumns; ++c) {
        for (int t = 1; t <= kPrefetchTiles; ++t) {
          __builtin_prefetch(element_address(column[c], kType, t * next_tile + k + s * kL), 0, 2);
        }
        bv[c] = load(element_address(column[c], kType, k + s * kL), kType, kL);
      }
#pragma GCC unroll 8
      for (int r = 0; r < kRows; ++r) {
        const Vec::F xr = load(x + r * k_len + k + s * kL, ElementType::F32, kL);
#pragma GCC unroll 8
        for (int c = 0; c < kColumns; ++c) acc[s][r][c] = multiply_add(xr, bv[c], acc[s][r][c]);
      }
    }
  }
  for (; k < k_len; k += kL) {
    const int n = int(std::min<int64_t>(kL, k_len - k));
    Vec::F bv[kColumns];
    for (int c = 0; c < kColumns; ++c) bv[c] = load(element_address(column[c], kType, k), kType, n);
    for (int r = 0; r < kRows; ++r) {
      const Vec::F xr = load(x + r * k_len + k, ElementType::F32, n);
      for (int c = 0; c < kColumns; ++c) acc[0][r][c] = multiply_add(xr, bv[c], acc[0][r][c]);
    }
  }
  for (int r = 0; r < kRows; ++r) {
    Vec::F sum[kColumns];
    for (int c = 0; c < kColumns; ++c) {
      sum[c] = acc[0][r][c];
      for (int s = 1; s < kSets; ++s) sum[c] = Vec::add(sum[c], acc[s][r][c]);
    }
    if constexpr (kColumns % 4 == 0) {
      for (int c = 0; c < kColumns; c += 4) Vec::reduce4(sum[c], sum[c + 1], sum[c + 2], sum[c + 3], out + r * ld + c);
    } else {
      for (int c = 0; c < kColumns; ++c) out[r * ld + c] = Vec::reduce(sum[c]);
    }
  }
}

// dot_tile over the whole tiles of kTileColumns from column c to `cols`; returns where they end.
template <int kRows, int kTileColumns, int kPrefetchTiles, ElementType kType, class X>
int64_t dot_tiles(const X* x, const MatrixOperand& b, int64_t k_len, int64_t c0, int64_t c, int64_t cols, float* out,
                  int64_t ld) {
  for (; c + kTileColumns <= cols; c += kTileColumns) {
    dot_tile<kRows, kTileColumns, kPrefetchTiles, kType, X>(x, b, k_len, c0 + c, out + c, ld);
  }
  return c;
}

template <int kRows, ElementType kType, class X>
void dot_rows_of(const X* x, const MatrixOperand& b, int64_t k_len, int64_t c0, int64_t cols, float* out, int64_t ld,
                 const GemmTuning& tuning) {
  constexpr int kColumns = gemv_columns(kRows);
  int64_t c = 0;
  if (k_len * element_bytes(kType) >= kGemvPrefetchColumnBytes) {
    const bool two_ahead = tuning.b_prefetch_tiles >= 2;
    if (tuning.streams_b_in_one_pass) {
      two_ahead ? dot_tiles<kRows, 1, 2, kType>(x, b, k_len, c0, 0, cols, out, ld)
                : dot_tiles<kRows, 1, 1, kType>(x, b, k_len, c0, 0, cols, out, ld);
      return;
    }
    if constexpr (kRows == 1) {
      if (gemv_tile_columns(1, tuning) == kGemvWideColumns) {
        c = two_ahead ? dot_tiles<1, kGemvWideColumns, 2, kType>(x, b, k_len, c0, 0, cols, out, ld)
                      : dot_tiles<1, kGemvWideColumns, 1, kType>(x, b, k_len, c0, 0, cols, out, ld);
        dot_tiles<1, 1, 0, kType>(x, b, k_len, c0, c, cols, out, ld);
        return;
      }
    }
    c = two_ahead ? dot_tiles<kRows, kColumns, 2, kType>(x, b, k_len, c0, 0, cols, out, ld)
                  : dot_tiles<kRows, kColumns, 1, kType>(x, b, k_len, c0, 0, cols, out, ld);
  } else {
    c = dot_tiles<kRows, kColumns, 0, kType>(x, b, k_len, c0, 0, cols, out, ld);
  }
  dot_tiles<kRows, 1, 0, kType>(x, b, k_len, c0, c, cols, out, ld);
}

template <int kRows>
void dot_rows(const float* x, const MatrixOperand& b, int64_t k_len, int64_t c0, int64_t cols, float* out, int64_t ld,
              const GemmTuning& tuning) {
  switch (b.type) {
    case ElementType::F32: return dot_rows_of<kRows, ElementType::F32>(x, b, k_len, c0, cols, out, ld, tuning);
    case ElementType::F16: return dot_rows_of<kRows, ElementType::F16>(x, b, k_len, c0, cols, out, ld, tuning);
    case ElementType::BF16: return dot_rows_of<kRows, ElementType::BF16>(x, b, k_len, c0, cols, out, ld, tuning);
  }
}

// fn(std::integral_constant<int, rows>) for rows in 1 .. kGemvMaxRows (more: kGemvMaxRows).
template <class Fn>
void with_row_count(int rows, Fn&& fn) {
  switch (rows) {
    case 1: return fn(std::integral_constant<int, 1>());
    case 2: return fn(std::integral_constant<int, 2>());
    case 3: return fn(std::integral_constant<int, 3>());
    case 4: return fn(std::integral_constant<int, 4>());
    case 5: return fn(std::integral_constant<int, 5>());
    case 6: return fn(std::integral_constant<int, 6>());
    case 7: return fn(std::integral_constant<int, 7>());
    default: return fn(std::integral_constant<int, kGemvMaxRows>());
  }
}

// out[0, cols) += sum over k in [k0, k0 + kRows) of x[k] * row k of a row-major B.
template <int kRows>
TG_EVG_INLINE void axpy_rows(const float* x, const MatrixOperand& b, int64_t k0, int64_t c0, int64_t cols, float* out) {
  constexpr int kL = Vec::kLanes;
  Vec::F xk[kRows];
  const void* row[kRows];
  for (int r = 0; r < kRows; ++r) {
    xk[r] = Vec::set1(x[k0 + r]);
    row[r] = element_address(b.data, b.type, (k0 + r) * b.ld + c0);
  }
  for (int64_t j = 0; j < cols; j += kL) {
    const int n = int(std::min<int64_t>(kL, cols - j));
    Vec::F acc = n == kL ? Vec::load(out + j) : Vec::load_n(out + j, ElementType::F32, n);
    for (int r = 0; r < kRows; ++r) {
      const void* p = element_address(row[r], b.type, j);
      acc = Vec::fmadd(xk[r], n == kL ? Vec::load(p, b.type) : Vec::load_n(p, b.type, n), acc);
    }
    Vec::store_n(out + j, acc, n);
  }
}

}  // namespace detail

#if defined(TG_EVG_TARGET_BF16_DOT)
// As gemv below, for `rows` rows of A as contiguous bf16 against a column-major bf16 B, multiplied
// in pairs.
inline void gemv_bf16_pairs(const uint16_t* x, int rows, const MatrixOperand& b, int64_t k_len, int64_t c0,
                            int64_t cols, float* out, int64_t ld, const GemmTuning& tuning) {
  detail::with_row_count(rows, [&](auto kRows) {
    detail::dot_rows_of<decltype(kRows)::value, ElementType::BF16>(x, b, k_len, c0, cols, out, ld, tuning);
  });
}
#endif

// out[r * ld + c] = sum_k x[r * k_len + k] * B(k, c0 + c) for r < rows, c < cols: `rows` rows of
// A as contiguous f32. A row-major B is only streamed for one row (rows == 1). `tuning`: how a
// column-major B's long columns are read (GemmTuning).
inline void gemv(const float* x, int rows, const MatrixOperand& b, int64_t k_len, int64_t c0, int64_t cols, float* out,
                 int64_t ld, const GemmTuning& tuning) {
  if (b.transposed) {
    return detail::with_row_count(
        rows, [&](auto kRows) { detail::dot_rows<decltype(kRows)::value>(x, b, k_len, c0, cols, out, ld, tuning); });
  }
  std::fill_n(out, cols, 0.0f);
  constexpr int kRows = 4;
  int64_t k = 0;
  for (; k + kRows <= k_len; k += kRows) detail::axpy_rows<kRows>(x, b, k, c0, cols, out);
  for (; k < k_len; ++k) detail::axpy_rows<1>(x, b, k, c0, cols, out);
}

}  // namespace TG_EVG_TARGET_NAMESPACE
}  // namespace tg::evg::host
