#pragma once
// How an M x N auxiliary matrix sits in memory (strides in elements). Element (r, c) is at
//   RowMajor     ptr[r * ld + c]        ld = 0 means packed (N)
//   ColumnMajor  ptr[c * ld + r]        ld = 0 means packed (M): a transposed row-major matrix
//   Strided      ptr[r * row_stride + c * col_stride]   any view, including broadcasts (0)
#include <cstdint>
#include <string>

#include "tilegraph/evg/fusion/node.h"

namespace tg::evg::layout {

struct RowMajor {
  static constexpr const char* kName = "RowMajor";
  int64_t ld = 0;

  // The strides to use for an m x n matrix (ld resolved), or a tg::Error via node_error.
  void resolve(int64_t m, int64_t n, int64_t& row_stride, int64_t& col_stride, const NodeContext& ctx,
               const char* node) const {
    if (ld < 0 || (ld != 0 && m > 1 && ld < n)) {
      node_error(ctx, node, "row-major ld=" + std::to_string(ld) + " < n=" + std::to_string(n));
    }
    row_stride = ld ? ld : n;
    col_stride = 1;
  }
};

struct ColumnMajor {
  static constexpr const char* kName = "ColumnMajor";
  int64_t ld = 0;

  void resolve(int64_t m, int64_t n, int64_t& row_stride, int64_t& col_stride, const NodeContext& ctx,
               const char* node) const {
    if (ld < 0 || (ld != 0 && n > 1 && ld < m)) {
      node_error(ctx, node, "column-major ld=" + std::to_string(ld) + " < m=" + std::to_string(m));
    }
    row_stride = 1;
    col_stride = ld ? ld : m;
  }
};

struct Strided {
  static constexpr const char* kName = "Strided";
  int64_t row_stride = 0;
  int64_t col_stride = 1;

  void resolve(int64_t, int64_t, int64_t& rs, int64_t& cs, const NodeContext&, const char*) const {
    rs = row_stride;
    cs = col_stride;
  }
};

}  // namespace tg::evg::layout
