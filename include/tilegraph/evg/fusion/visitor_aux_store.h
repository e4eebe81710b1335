#pragma once
// VisitorAuxStore<Element, Layout>: writes its input to an M x N matrix in the STORE phase and
// passes the input on. The input must already be of type Element (insert a VisitorCast).
#include <string>
#include <type_traits>

#include "tilegraph/evg/arch/simd.h"
#include "tilegraph/evg/fusion/layout.h"
#include "tilegraph/evg/fusion/node.h"
#include "tilegraph/evg/fusion/tile.h"
#include "tilegraph/evg/numeric/element.h"

TG_EVG_DIAGNOSTICS_PUSH

namespace tg::evg {

template <EvgElement Element, class Layout = layout::RowMajor>
struct VisitorAuxStore {
  static constexpr const char* kName = "VisitorAuxStore";
  static constexpr NodeRole kRole = NodeRole::kStore;
  static constexpr int kArity = 1;
  using ElementInput = Element;
  using ElementOutput = Element;
  using Lane = LaneOf<Element>;
  struct Arguments {
    Element* ptr = nullptr;
    Layout layout{};
  };

  VisitorAuxStore(const Arguments& args, const NodeContext& ctx)
      : ptr_(reinterpret_cast<Lane*>(args.ptr)), m_(ctx.problem.m), n_(ctx.problem.n) {
    const int64_t m = m_, n = n_;
    args.layout.resolve(m, n, row_stride_, col_stride_, ctx, kName);
    if (!ptr_ && m > 0 && n > 0) node_error(ctx, kName, "null pointer");
    // Blocks are stored concurrently, so no two elements may share an address: one stride must
    // step over a whole row or column of the other.
    const int64_t rs = row_stride_ < 0 ? -row_stride_ : row_stride_;
    const int64_t cs = col_stride_ < 0 ? -col_stride_ : col_stride_;
    const bool empty = m == 0 || n == 0;
    const bool overlap = m > 1 && n > 1 ? !((cs >= 1 && rs >= cs * n) || (rs >= 1 && cs >= rs * m))
                                        : !empty && ((m > 1 && rs == 0) || (n > 1 && cs == 0));
    if (overlap) {
      node_error(ctx, kName,
                 "strides (" + std::to_string(row_stride_) + ", " + std::to_string(col_stride_) +
                     ") make elements of the " + std::to_string(m) + "x" + std::to_string(n) + " output overlap");
    }
  }

  Footprint footprint() const { return strided_footprint(ptr_, sizeof(Lane), m_, n_, row_stride_, col_stride_); }

  // An f32 output with rows of contiguous elements, which a GEMM can sum blocks in (node.h).
  float* in_place_output(int64_t& ld) const {
    if constexpr (std::is_same_v<Element, float>) {
      if (col_stride_ != 1 || m_ <= 0 || n_ <= 0) return nullptr;
      if (m_ > 1 && row_stride_ < n_) return nullptr;  // rows backwards, or overlapping
      ld = m_ > 1 ? row_stride_ : n_;
      return ptr_;
    } else {
      return nullptr;
    }
  }

  template <int W, Extent In>
  void store(const SubTile& tile, const Lane* in) const {
    Lane* dst = ptr_ + tile.row0 * row_stride_ + tile.col0 * col_stride_;
    if (col_stride_ == 1) {
      for (int r = 0; r < tile.rows; ++r) {
        Lane* row = dst + r * row_stride_;
        int c = 0;
        for (; c + W <= tile.cols; c += W) simd::store<W>(row + c, fetch<Extent::kTile, In, W>(in, r, c, tile.ld));
        if (c < tile.cols) {
          simd::store_partial<W>(row + c, fetch<Extent::kTile, In, W>(in, r, c, tile.ld), tile.cols - c);
        }
      }
    } else if (row_stride_ == 1) {  // column-major: write columns contiguously
      for (int c = 0; c < tile.cols; ++c) {
        Lane* column = dst + c * col_stride_;
        for (int r = 0; r < tile.rows; ++r) column[r] = element<In>(in, r, c, tile.ld);
      }
    } else {
      for (int r = 0; r < tile.rows; ++r) {
        for (int c = 0; c < tile.cols; ++c) dst[r * row_stride_ + c * col_stride_] = element<In>(in, r, c, tile.ld);
      }
    }
  }

 private:
  Lane* ptr_;
  int64_t m_ = 0, n_ = 0;
  int64_t row_stride_ = 0, col_stride_ = 0;
};

}  // namespace tg::evg

TG_EVG_DIAGNOSTICS_POP
