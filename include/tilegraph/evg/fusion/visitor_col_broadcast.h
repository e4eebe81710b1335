#pragma once
// VisitorColBroadcast<Element>: a vector of M values indexed by row, broadcast across every
// column (a per-row scale or bias). Its value has col extent: one element per sub-tile row.
#include <cstdint>

#include "tilegraph/evg/fusion/node.h"
#include "tilegraph/evg/fusion/tile.h"
#include "tilegraph/evg/numeric/element.h"

namespace tg::evg {

template <EvgElement Element = float>
struct VisitorColBroadcast {
  static constexpr const char* kName = "VisitorColBroadcast";
  static constexpr NodeRole kRole = NodeRole::kLoad;
  static constexpr int kArity = 0;
  static constexpr Extent kExtent = Extent::kCol;
  using ElementOutput = Element;
  using Lane = LaneOf<Element>;
  struct Arguments {
    const Element* ptr = nullptr;
    int64_t stride = 1;  // elements between consecutive rows' values
  };

  VisitorColBroadcast(const Arguments& args, const NodeContext& ctx)
      : ptr_(reinterpret_cast<const Lane*>(args.ptr)), stride_(args.stride) {
    if (!ptr_ && ctx.problem.n > 0 && ctx.problem.m > 0) node_error(ctx, kName, "null pointer");
    // Read only when the output is not empty.
    if (ctx.problem.m > 0 && ctx.problem.n > 0) {
      footprint_ = strided_footprint(ptr_, sizeof(Lane), 1, ctx.problem.m, 0, stride_);
    }
  }

  Footprint footprint() const { return footprint_; }

  template <int W>
  void load(const SubTile& tile, Lane* out) const {
    const Lane* src = ptr_ + tile.row0 * stride_;
    for (int r = 0; r < tile.rows; ++r) out[r] = src[r * stride_];
  }

 private:
  const Lane* ptr_;
  int64_t stride_;
  Footprint footprint_;
};

}  // namespace tg::evg
