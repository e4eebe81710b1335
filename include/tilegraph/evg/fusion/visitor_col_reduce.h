#pragma once
// VisitorColReduce<ReduceFn>: reduces over columns into a column vector, out[row] = fold over
// every column of D of the input (the 1-per-row reduction: a row sum, a row max for softmax).
// The input passes through.
//
// Deterministic and independent of the lane count: within a sub-tile row, column c folds into
// virtual lane (c mod 16), the 16 lanes are folded in order at the end of the row, sub-tiles in
// column order into the block's partial, and finish() folds the blocks' partials in block-column
// order. Results depend on the block grid and the compute length (where partial sums break),
// never on thread count, schedule or SIMD width. Max and min propagate NaN.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "tilegraph/evg/arch/simd.h"
#include "tilegraph/evg/block.h"
#include "tilegraph/evg/fusion/functional.h"
#include "tilegraph/evg/fusion/node.h"
#include "tilegraph/evg/fusion/tile.h"
#include "tilegraph/evg/numeric/element.h"

TG_EVG_DIAGNOSTICS_PUSH

namespace tg::evg {

template <class ReduceFn, class Element = float>
struct VisitorColReduce {
  static_assert(std::is_same_v<Element, float>, "reductions fold f32 values");
  static constexpr const char* kName = "VisitorColReduce";
  static constexpr NodeRole kRole = NodeRole::kReduce;
  static constexpr int kArity = 1;
  static constexpr int kVirtualLanes = 16;
  using ElementInput = Element;
  using ElementOutput = Element;
  struct Arguments {
    Element* ptr = nullptr;  // M results
    int64_t stride = 1;
  };

  VisitorColReduce(const Arguments& args, const NodeContext& ctx)
      : out_(args.ptr),
        stride_(args.stride),
        m_(ctx.problem.m),
        col_blocks_(ctx.grid.col_blocks(ctx.problem.n)),
        partials_(reinterpret_cast<float*>(ctx.workspace)) {
    if (!out_ && m_ > 0) node_error(ctx, kName, "null pointer");
    if (m_ > 1 && stride_ == 0) node_error(ctx, kName, "stride 0 would store every row's result in one place");
    const size_t count = size_t(col_blocks_ * m_);
    if (count > 0 && !partials_) node_error(ctx, kName, "no workspace for the partials");
    std::fill_n(partials_, count, ReduceFn::identity());
  }

  // One partial column per block column, in the run's workspace (NodeContext::workspace).
  static size_t workspace_bytes(const GemmShape& problem, const BlockGrid& grid) {
    return size_t(grid.col_blocks(problem.n) * problem.m) * sizeof(float);
  }

  template <int W, Extent In>
  void reduce(const SubTile& tile, const float* in, float* scratch) {
    static_assert(kVirtualLanes % W == 0, "lane counts above 16 are not supported");
    using V = simd::Vec<float, W>;
    using I = simd::Vec<int32_t, W>;
    I lane_index;
    for (int j = 0; j < W; ++j) lane_index[j] = j;
    const V identity = simd::splat<W>(ReduceFn::identity());
    const ReduceFn fn;
    float* partial = partials_ + tile.block_col * m_ + tile.row0;
    for (int r = 0; r < tile.rows; ++r) {
      for (int j = 0; j < kVirtualLanes; j += W) simd::store<W>(scratch + j, identity);
      for (int i = 0; i < tile.ld; i += W) {
        V x = fetch<Extent::kTile, In, W>(in, r, i, tile.ld);
        x = simd::select(lane_index + i < tile.cols, x, identity);  // padding columns
        float* lanes = scratch + (i % kVirtualLanes);
        simd::store<W>(lanes, fn(simd::load<W>(lanes), x));
      }
      simd::Vec<float, 1> row = simd::splat<1>(partial[r]);
      for (int j = 0; j < kVirtualLanes; ++j) row = fn(row, simd::splat<1>(scratch[j]));
      partial[r] = row[0];
    }
  }

  // Written in finish(): N (or M) results, stride apart.
  Footprint footprint() const { return strided_footprint(out_, sizeof(Element), 1, m_, 0, stride_); }

  void finish(const Launcher& launcher) {
    constexpr int64_t kRowsPerItem = 1024;
    const int64_t items = (m_ + kRowsPerItem - 1) / kRowsPerItem;
    launcher.parallel_for(
        launcher.pool, items,
        [](void* self_ptr, int64_t item, int) {
          auto* self = static_cast<VisitorColReduce*>(self_ptr);
          const int64_t begin = item * kRowsPerItem;
          const int64_t end = begin + kRowsPerItem < self->m_ ? begin + kRowsPerItem : self->m_;
          const ReduceFn fn;
          for (int64_t r = begin; r < end; ++r) {
            simd::Vec<float, 1> value = simd::splat<1>(ReduceFn::identity());
            for (int64_t b = 0; b < self->col_blocks_; ++b) {
              value = fn(value, simd::splat<1>(self->partials_[size_t(b * self->m_ + r)]));
            }
            self->out_[r * self->stride_] = value[0];
          }
        },
        this);
  }

 private:
  Element* out_;
  int64_t stride_, m_, col_blocks_;
  float* partials_;  // col_blocks x M
};

}  // namespace tg::evg

TG_EVG_DIAGNOSTICS_POP
