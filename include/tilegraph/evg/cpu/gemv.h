#pragma once
// The M = 1 path (decode): a row vector times B. Each element of B is used once, so the work is
// bound by reading B from memory; packing it would only add traffic. B is read straight from its
// storage, converted to f32 in registers, in as few long sequential streams as keep the
// hardware prefetchers busy.
#include <algorithm>
#include <cstdint>

#include "tilegraph/evg/cpu/vector.h"

namespace tg::evg::cpu {
inline namespace TG_EVG_TARGET_NAMESPACE {

namespace detail {

// out[c] = x . column (c0 + c) of a column-major B, for c < kColumns: kColumns streams at once,
// two vectors of K per step so that each column has two independent FMA chains.
template <int kColumns>
TG_EVG_INLINE void dot_columns(const float* x, const MatrixOperand& b, int64_t k_len, int64_t c0,
                               float* out) {
  constexpr int kL = Vec::kLanes;
  const void* column[kColumns];
  for (int c = 0; c < kColumns; ++c) column[c] = element_address(b.data, b.type, (c0 + c) * b.ld);
  Vec::F acc[kColumns][2];
  for (int c = 0; c < kColumns; ++c) acc[c][0] = acc[c][1] = Vec::zero();
  int64_t k = 0;
  for (; k + 2 * kL <= k_len; k += 2 * kL) {
    const Vec::F x0 = Vec::load(x + k), x1 = Vec::load(x + k + kL);
#pragma GCC unroll 8
    for (int c = 0; c < kColumns; ++c) {
      acc[c][0] = Vec::fmadd(x0, Vec::load(element_address(column[c], b.type, k), b.type), acc[c][0]);
      acc[c][1] =
          Vec::fmadd(x1, Vec::load(element_address(column[c], b.type, k + kL), b.type), acc[c][1]);
    }
  }
  for (; k < k_len; k += kL) {
    const int n = int(std::min<int64_t>(kL, k_len - k));
    const Vec::F xk = Vec::load_n(x + k, ElementType::F32, n);
    for (int c = 0; c < kColumns; ++c) {
      acc[c][0] = Vec::fmadd(xk, Vec::load_n(element_address(column[c], b.type, k), b.type, n), acc[c][0]);
    }
  }
  for (int c = 0; c < kColumns; ++c) out[c] = Vec::reduce(Vec::add(acc[c][0], acc[c][1]));
}

// out[0, cols) += sum over k in [k0, k0 + kRows) of x[k] * row k of a row-major B.
template <int kRows>
TG_EVG_INLINE void axpy_rows(const float* x, const MatrixOperand& b, int64_t k0, int64_t c0,
                             int64_t cols, float* out) {
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

// Columns per group of the column-major path: as many weight rows streamed at once.
inline constexpr int kGemvColumns = 4;

// out[c] = sum_k x[k] * B(k, c0 + c) for c < cols, x holding K contiguous f32 values.
inline void gemv(const float* x, const MatrixOperand& b, int64_t k_len, int64_t c0, int64_t cols,
                 float* out) {
  if (b.transposed) {
    int64_t c = 0;
    for (; c + kGemvColumns <= cols; c += kGemvColumns) {
      detail::dot_columns<kGemvColumns>(x, b, k_len, c0 + c, out + c);
    }
    for (; c < cols; ++c) detail::dot_columns<1>(x, b, k_len, c0 + c, out + c);
    return;
  }
  std::fill_n(out, cols, 0.0f);
  constexpr int kRows = 4;
  int64_t k = 0;
  for (; k + kRows <= k_len; k += kRows) detail::axpy_rows<kRows>(x, b, k, c0, cols, out);
  for (; k < k_len; ++k) detail::axpy_rows<1>(x, b, k, c0, cols, out);
}

}  // namespace TG_EVG_TARGET_NAMESPACE
}  // namespace tg::evg::cpu
