#pragma once
// VisitorRowBroadcast<Element>: a vector of N values indexed by column, broadcast down every
// row (a bias[col]). Its value has row extent: ld elements per sub-tile, and work on it
// downstream happens once per column until it meets a tile.
#include <cstdint>
#include <cstring>

#include "tilegraph/evg/fusion/node.h"
#include "tilegraph/evg/fusion/tile.h"
#include "tilegraph/evg/numeric/element.h"

namespace tg::evg {

template <EvgElement Element = float>
struct VisitorRowBroadcast {
  static constexpr const char* kName = "VisitorRowBroadcast";
  static constexpr NodeRole kRole = NodeRole::kLoad;
  static constexpr int kArity = 0;
  static constexpr Extent kExtent = Extent::kRow;
  using ElementOutput = Element;
  using Lane = LaneOf<Element>;
  struct Arguments {
    const Element* ptr = nullptr;
    int64_t stride = 1;  // elements between consecutive columns' values
  };

  VisitorRowBroadcast(const Arguments& args, const NodeContext& ctx)
      : ptr_(reinterpret_cast<const Lane*>(args.ptr)), stride_(args.stride) {
    if (!ptr_ && ctx.problem.n > 0 && ctx.problem.m > 0) node_error(ctx, kName, "null pointer");
    // Read only when the output is not empty.
    if (ctx.problem.m > 0 && ctx.problem.n > 0) {
      footprint_ = strided_footprint(ptr_, sizeof(Lane), 1, ctx.problem.n, 0, stride_);
    }
  }

  Footprint footprint() const { return footprint_; }

  template <int W>
  void load(const SubTile& tile, Lane* out) const {
    const Lane* src = ptr_ + tile.col0 * stride_;
    if (stride_ == 1) {  // the usual bias: one copy instead of an element loop
      std::memcpy(out, src, size_t(tile.cols) * sizeof(Lane));
      return;
    }
    for (int c = 0; c < tile.cols; ++c) out[c] = src[c * stride_];
  }

 private:
  const Lane* ptr_;
  int64_t stride_;
  Footprint footprint_;
};

}  // namespace tg::evg
