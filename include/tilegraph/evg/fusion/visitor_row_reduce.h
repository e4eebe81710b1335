#pragma once
// VisitorRowReduce<ReduceFn>: reduces over rows into a row vector, out[col] = fold over every
// row of D of the input (CUTLASS's and Catlass's naming: the result is a 1 x N row). The input
// passes through, so the reduced value can also be stored.
//
// Deterministic: each block folds its rows in order into its own partial row (no atomics),
// and finish() folds the blocks' partials in block-row order. Results depend on the block grid
// (where the partial sums break) but never on thread count or schedule. Max and min propagate
// NaN; the sum of no rows is -0.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
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
struct VisitorRowReduce {
  static_assert(std::is_same_v<Element, float>, "reductions fold f32 values");
  static constexpr const char* kName = "VisitorRowReduce";
  static constexpr NodeRole kRole = NodeRole::kReduce;
  static constexpr int kArity = 1;
  using ElementInput = Element;
  using ElementOutput = Element;
  struct Arguments {
    Element* ptr = nullptr;  // N results
    int64_t stride = 1;
  };

  VisitorRowReduce(const Arguments& args, const NodeContext& ctx)
      : out_(args.ptr),
        stride_(args.stride),
        n_(ctx.problem.n),
        row_blocks_(ctx.grid.row_blocks(ctx.problem.m)),
        partials_(reinterpret_cast<float*>(ctx.workspace)) {
    if (!out_ && n_ > 0) node_error(ctx, kName, "null pointer");
    if (n_ > 1 && stride_ == 0) node_error(ctx, kName, "stride 0 would store every column's result in one place");
    const size_t count = size_t(row_blocks_ * n_);
    if (count > 0 && !partials_) node_error(ctx, kName, "no workspace for the partials");
    std::fill_n(partials_, count, ReduceFn::identity());
  }

  // One partial row per block row, in the run's workspace (NodeContext::workspace).
  static size_t workspace_bytes(const GemmShape& problem, const BlockGrid& grid) {
    return size_t(grid.row_blocks(problem.m) * problem.n) * sizeof(float);
  }

  // `scratch` holds ld floats: the block's partial for these columns, folded in registers-sized
  // steps and written back.
  template <int W, Extent In>
  void reduce(const SubTile& tile, const float* in, float* scratch) {
    float* partial = partials_ + tile.block_row * n_ + tile.col0;
    std::memcpy(scratch, partial, size_t(tile.cols) * sizeof(float));
    const ReduceFn fn;
    for (int r = 0; r < tile.rows; ++r) {
      for (int i = 0; i < tile.ld; i += W) {
        simd::store<W>(scratch + i, fn(simd::load<W>(scratch + i), fetch<Extent::kTile, In, W>(in, r, i, tile.ld)));
      }
    }
    std::memcpy(partial, scratch, size_t(tile.cols) * sizeof(float));
  }

  // Written in finish(): N (or M) results, stride apart.
  Footprint footprint() const { return strided_footprint(out_, sizeof(Element), 1, n_, 0, stride_); }

  void finish(const Launcher& launcher) {
    constexpr int64_t kColumnsPerItem = 1024;
    const int64_t items = (n_ + kColumnsPerItem - 1) / kColumnsPerItem;
    launcher.parallel_for(
        launcher.pool, items,
        [](void* self_ptr, int64_t item, int) {
          auto* self = static_cast<VisitorRowReduce*>(self_ptr);
          const int64_t begin = item * kColumnsPerItem;
          const int64_t end = begin + kColumnsPerItem < self->n_ ? begin + kColumnsPerItem : self->n_;
          const ReduceFn fn;
          for (int64_t c = begin; c < end; ++c) {
            simd::Vec<float, 1> value = simd::splat<1>(ReduceFn::identity());
            for (int64_t b = 0; b < self->row_blocks_; ++b) {
              value = fn(value, simd::splat<1>(self->partials_[size_t(b * self->n_ + c)]));
            }
            self->out_[c * self->stride_] = value[0];
          }
        },
        this);
  }

 private:
  Element* out_;
  int64_t stride_, n_, row_blocks_;
  float* partials_;  // row_blocks x N
};

}  // namespace tg::evg

TG_EVG_DIAGNOSTICS_POP
