#pragma once
// What one visit of the epilogue graph works on: a sub-tile of an accumulator block, and the
// shapes a node's value can have within it.
//
// A value is held in scratch in one of four extents:
//   kTile    rows x ld elements, row-major, ld = cols rounded up to the lane count, so every
//            loop runs over whole vectors (the padding lanes compute on stale data and are never
//            stored or reduced);
//   kRow     one row broadcast down the tile: ld elements, one per column (bias[col]);
//   kCol     one column broadcast across: rows elements (rounded up to the lanes), one per row;
//   kScalar  one value for the whole tile.
// An elementwise node's extent is the join of its inputs' (row with col gives tile), so work on
// broadcast operands is done once per row or column, not once per element.
#include <cstdint>

#include "tilegraph/evg/arch/simd.h"

TG_EVG_DIAGNOSTICS_PUSH

namespace tg::evg {

enum class Extent { kScalar, kRow, kCol, kTile };

constexpr Extent join(Extent a, Extent b) {
  if (a == b) return a;
  if (a == Extent::kScalar) return b;
  if (b == Extent::kScalar) return a;
  return Extent::kTile;  // row with col, or anything with tile
}

struct SubTile {
  int64_t row0 = 0, col0 = 0;  // position of element (0, 0) in D
  int rows = 0, cols = 0;      // valid elements
  int ld = 0;                  // row stride of tile-extent scratch: cols rounded up to the lanes
  const float* acc = nullptr;  // the accumulator at (row0, col0)
  int64_t acc_ld = 0;
  int64_t block_row = 0, block_col = 0;  // the block's coordinates in the grid
};

// Lanes [i, i + W) of a value of extent `In`, for an output of extent `Out` at (row r, index i):
// i runs over columns for tile and row outputs, over rows for col outputs.
template <Extent Out, Extent In, int W, class T>
TG_EVG_INLINE simd::Vec<T, W> fetch(const T* value, int r, int i, int ld) {
  static_assert(join(Out, In) == Out, "an input cannot be wider than the node's output");
  if constexpr (In == Extent::kScalar) {
    return simd::splat<W>(value[0]);
  } else if constexpr (In == Extent::kTile) {
    return simd::load<W>(value + int64_t(r) * ld + i);
  } else if constexpr (In == Extent::kRow) {
    return simd::load<W>(value + i);
  } else if constexpr (Out == Extent::kCol) {  // a col input of a col output: along rows
    return simd::load<W>(value + i);
  } else {  // a col input of a tile output: one value per row
    return simd::splat<W>(value[r]);
  }
}

// Scalar element (r, c) of a value of extent `In` (for stores and reductions).
template <Extent In, class T>
TG_EVG_INLINE T element(const T* value, int r, int c, int ld) {
  if constexpr (In == Extent::kScalar) return value[0];
  if constexpr (In == Extent::kTile) return value[int64_t(r) * ld + c];
  if constexpr (In == Extent::kRow) return value[c];
  if constexpr (In == Extent::kCol) return value[r];
}

// Calls body(r, i) for every vector of an output of extent `E`: rows x (ld / W) for tiles
// (flattened into one run when `flat`: all operands are tiles with the same ld), ld / W for
// rows, ceil(rows / W) for cols, once for scalars.
template <Extent E, int W, bool Flat, class Body>
TG_EVG_INLINE void for_each_vector(const SubTile& tile, Body&& body) {
  if constexpr (E == Extent::kTile) {
    if constexpr (Flat) {
      const int n = tile.rows * tile.ld;
      for (int i = 0; i < n; i += W) body(0, i);
    } else {
      for (int r = 0; r < tile.rows; ++r) {
        for (int i = 0; i < tile.ld; i += W) body(r, i);
      }
    }
  } else if constexpr (E == Extent::kRow) {
    for (int i = 0; i < tile.ld; i += W) body(0, i);
  } else if constexpr (E == Extent::kCol) {
    for (int i = 0; i < tile.rows; i += W) body(0, i);
  } else {
    body(0, 0);
  }
}

}  // namespace tg::evg

TG_EVG_DIAGNOSTICS_POP
