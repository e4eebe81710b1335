#pragma once
// Steps the row ops (rmsnorm, layernorm, softmax, attention) share. The CGRA broadcasts a unit
// vector along a row (VuV) but has no per-row scalar operand, so a per-row statistic is applied
// with the rows transposed: x [R][D] -> xT [D][R], where the R statistics are the unit vector
// that VuV broadcasts over the D blocks, and ReduceTensor over the middle axis of [1][D][R]
// yields them in the same order.
#include <cstdint>

#include "tilegraph/sim/cgra.h"
#include "tilegraph/sim/chip.h"

namespace tg::sim::oplib::detail {

// [rows][cols] f32 at src -> [cols][rows] at dst.
inline uint64_t transpose_f32(Tile& tile, uint64_t src, uint64_t dst, int64_t rows, int64_t cols) {
  return execute(tile, cgra::TransposeTensor{Format::FP32, src, dst, rows, cols});
}

// stat[r] = op over d of xt[d][r], xt being [D][R] f32.
inline uint64_t reduce_columns(Tile& tile, cgra::ReduceOp op, uint64_t xt, uint64_t stat, int64_t d, int64_t r) {
  return execute(tile, cgra::ReduceTensor{op, Format::FP32, xt, stat, 1, d, r});
}

// xt[d][r] op= stat[r].
inline uint64_t apply_columns(Tile& tile, cgra::ArithOp op, uint64_t xt, uint64_t stat, int64_t d, int64_t r) {
  return execute(tile, cgra::ArithVuV{op, Format::FP32, xt, stat, xt, d * r, r});
}

// Softmax of each of the R rows of x [R][D] f32 in place, with xt [D][R] and two R-vectors of
// scratch (max, sum): max, subtract, exp, sum, reciprocal, multiply, all on the transposed rows.
inline uint64_t softmax_rows_f32(Tile& tile, uint64_t x, uint64_t xt, uint64_t max, uint64_t sum, int64_t r,
                                 int64_t d) {
  uint64_t cycles = transpose_f32(tile, x, xt, r, d);
  cycles += reduce_columns(tile, cgra::ReduceOp::Max, xt, max, d, r);
  cycles += apply_columns(tile, cgra::ArithOp::Sub, xt, max, d, r);
  cycles += execute(tile, cgra::UnaryV{cgra::UnaryOp::Exp, Format::FP32, xt, xt, d * r});
  cycles += reduce_columns(tile, cgra::ReduceOp::Sum, xt, sum, d, r);
  cycles += execute(tile, cgra::UnaryV{cgra::UnaryOp::Recip, Format::FP32, sum, sum, r});
  cycles += apply_columns(tile, cgra::ArithOp::Mul, xt, sum, d, r);
  return cycles + transpose_f32(tile, xt, x, d, r);
}

// n elements of `from` at src to f32 at dst (a copy for fp32).
inline uint64_t widen(Tile& tile, Format from, uint64_t src, uint64_t dst, int64_t n) {
  return execute(tile, cgra::ConvertV{from, Format::FP32, src, dst, n});
}
inline uint64_t narrow(Tile& tile, Format to, uint64_t src, uint64_t dst, int64_t n) {
  return execute(tile, cgra::ConvertV{Format::FP32, to, src, dst, n});
}

}  // namespace tg::sim::oplib::detail
