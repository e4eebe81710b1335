#pragma once
// VisitorAccLoad: the GEMM's f32 accumulator for the sub-tile (Catlass EVG's AccLoad).
#include <cstring>

#include "tilegraph/evg/arch/simd.h"
#include "tilegraph/evg/fusion/node.h"
#include "tilegraph/evg/fusion/tile.h"

namespace tg::evg {

struct VisitorAccLoad {
  static constexpr const char* kName = "VisitorAccLoad";
  static constexpr NodeRole kRole = NodeRole::kLoad;
  static constexpr int kArity = 0;
  static constexpr Extent kExtent = Extent::kTile;
  using ElementOutput = float;
  struct Arguments {};

  VisitorAccLoad(const Arguments&, const NodeContext&) {}

  // The accumulator is the GEMM's, not the caller's.
  Footprint footprint() const { return {}; }

  // Lanes [i, i + W) of row r, straight from the accumulator (node.h); lanes past the
  // sub-tile's columns are zero.
  template <int W>
  simd::Vec<float, W> load_vector(const SubTile& tile, int r, int i) const {
    const float* row = tile.acc + r * tile.acc_ld + i;
    return i + W <= tile.cols ? simd::load<W>(row) : simd::load_partial<W>(row, tile.cols - i);
  }

  template <int W>
  void load(const SubTile& tile, float* out) const {
    for (int r = 0; r < tile.rows; ++r) {
      std::memcpy(out + int64_t(r) * tile.ld, tile.acc + r * tile.acc_ld, size_t(tile.cols) * sizeof(float));
    }
  }
};

}  // namespace tg::evg
