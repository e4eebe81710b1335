#pragma once
// VisitorAuxLoad<Element, Layout>: an M x N auxiliary matrix (the C or X of Catlass EVG's examples), any layout,
// loaded in its own element type (follow it with a VisitorCast to compute in f32).
#include <cstring>

#include "tilegraph/evg/fusion/layout.h"
#include "tilegraph/evg/fusion/node.h"
#include "tilegraph/evg/fusion/tile.h"
#include "tilegraph/evg/numeric/element.h"

namespace tg::evg {

template <EvgElement Element, class Layout = layout::RowMajor>
struct VisitorAuxLoad {
  static constexpr const char* kName = "VisitorAuxLoad";
  static constexpr NodeRole kRole = NodeRole::kLoad;
  static constexpr int kArity = 0;
  static constexpr Extent kExtent = Extent::kTile;
  using ElementOutput = Element;
  using Lane = LaneOf<Element>;
  struct Arguments {
    const Element* ptr = nullptr;
    Layout layout{};
  };

  VisitorAuxLoad(const Arguments& args, const NodeContext& ctx) : ptr_(reinterpret_cast<const Lane*>(args.ptr)) {
    args.layout.resolve(ctx.problem.m, ctx.problem.n, row_stride_, col_stride_, ctx, kName);
    if (!ptr_ && ctx.problem.m > 0 && ctx.problem.n > 0) node_error(ctx, kName, "null pointer");
    footprint_ = strided_footprint(ptr_, sizeof(Lane), ctx.problem.m, ctx.problem.n, row_stride_, col_stride_);
  }

  Footprint footprint() const { return footprint_; }

  template <int W>
  void load(const SubTile& tile, Lane* out) const {
    const Lane* src = ptr_ + tile.row0 * row_stride_ + tile.col0 * col_stride_;
    if (col_stride_ == 1) {
      for (int r = 0; r < tile.rows; ++r) {
        std::memcpy(out + int64_t(r) * tile.ld, src + r * row_stride_, size_t(tile.cols) * sizeof(Lane));
      }
    } else if (row_stride_ == 1) {  // column-major: read columns contiguously
      for (int c = 0; c < tile.cols; ++c) {
        const Lane* column = src + c * col_stride_;
        for (int r = 0; r < tile.rows; ++r) out[int64_t(r) * tile.ld + c] = column[r];
      }
    } else {
      for (int r = 0; r < tile.rows; ++r) {
        for (int c = 0; c < tile.cols; ++c) {
          out[int64_t(r) * tile.ld + c] = src[r * row_stride_ + c * col_stride_];
        }
      }
    }
  }

 private:
  const Lane* ptr_;
  int64_t row_stride_ = 0, col_stride_ = 0;
  Footprint footprint_;
};

}  // namespace tg::evg
