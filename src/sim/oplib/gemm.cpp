#include "tilegraph/sim/oplib/gemm.h"

#include "oplib/engine_order.h"
#include "oplib/op_checks.h"
#include "tilegraph/core/dtype.h"

namespace tg::sim::oplib {

namespace {

constexpr const char* kOp = "op_gemm";

// rows x columns of a 2-D slice.
std::pair<int64_t, int64_t> matrix_of(const char* op, const char* name, const Tsr& t) {
  const Shape4 s = t.shape.real();
  detail::require(
      s.n == 1 && s.h == 1, op,
      std::string(name) + " " + dims_string(t.shape.shape_real) + " is not a matrix (1 x 1 x rows x columns)");
  detail::require_layout(op, name, t, {MemLayout::Tensor, MemLayout::NTensor});
  return {s.w, s.c};
}

}  // namespace

uint64_t op_gemm(Tile& tile, const GemmParam& param, const Tsr& a, const Tsr& b, const Tsr* bias, const Tsr& out) {
  using detail::require;
  const auto [m, k] = matrix_of(kOp, "a", a);
  const auto [b_rows, b_cols] = matrix_of(kOp, "b", b);
  const auto [out_m, out_n] = matrix_of(kOp, "out", out);
  require(b.format == a.format, kOp, "b must have a's format");
  const int64_t n = param.b_transposed ? b_rows : b_cols;
  const int64_t bk = param.b_transposed ? b_cols : b_rows;
  require(bk == k, kOp, "a has K = " + std::to_string(k) + ", b has " + std::to_string(bk));
  require(out_m == m && out_n == n, kOp,
          "out is " + std::to_string(out_m) + " x " + std::to_string(out_n) + ", the product " + std::to_string(m) +
              " x " + std::to_string(n));
  ne::Gemm g;
  g.in_format = a.format;
  g.a = a.addr;
  g.b = b.addr;
  g.dst = out.addr;
  g.m = m;
  g.n = n;
  g.k = k;
  g.b_transposed = param.b_transposed;
  g.accumulate = param.accumulate;
  g.post.act = param.act;
  g.post.out_format = out.format;
  if (bias) {
    detail::require_format(kOp, "bias", *bias, {Format::FP32});
    require(bias->shape.real().elements() == n, kOp,
            "bias has " + std::to_string(bias->shape.real().elements()) + " elements, out has " + std::to_string(n) +
                " columns");
    g.post.bias = bias->addr;
  }
  detail::after_transfers(tile);
  return execute(tile, g);
}

uint64_t op_gemm_q8_0(Tile& tile, const GemmParam& param, const Tsr& a, const Tsr& w, const Tsr* bias, const Tsr& out) {
  constexpr const char* op = "op_gemm_q8_0";
  using detail::require;
  const auto [m, k] = matrix_of(op, "a", a);
  const auto [n, w_bytes] = matrix_of(op, "w", w);
  const auto [out_m, out_n] = matrix_of(op, "out", out);
  detail::require_format(op, "a", a, {Format::FP32});
  detail::require_format(op, "w", w, {Format::INT8});
  require(param.b_transposed, op, "w is a weight stored as N rows of K: b_transposed must be set");
  require(!param.accumulate, op, "accumulate is not available on the q8_0 path");
  require(k % kQ8_0BlockSize == 0, op, "a has K = " + std::to_string(k) + ", not whole q8_0 blocks of 32");
  const int64_t row_bytes = k / kQ8_0BlockSize * int64_t(sizeof(BlockQ8_0));
  require(w_bytes == row_bytes, op,
          "w rows are " + std::to_string(w_bytes) + " bytes, K = " + std::to_string(k) + " needs " +
              std::to_string(row_bytes) + " (K/32 blocks of 34)");
  require(out_m == m && out_n == n, op,
          "out is " + std::to_string(out_m) + " x " + std::to_string(out_n) + ", the product " + std::to_string(m) +
              " x " + std::to_string(n));
  ne::GemmQ8_0 g;
  g.a = a.addr;
  g.b = w.addr;
  g.dst = out.addr;
  g.m = m;
  g.n = n;
  g.k = k;
  g.post.act = param.act;
  g.post.out_format = out.format;
  if (bias) {
    detail::require_format(op, "bias", *bias, {Format::FP32});
    require(bias->shape.real().elements() == n, op,
            "bias has " + std::to_string(bias->shape.real().elements()) + " elements, out has " + std::to_string(n) +
                " columns");
    g.post.bias = bias->addr;
  }
  detail::after_transfers(tile);
  return execute(tile, g);
}

OpCost gemm_q8_0_cost(const ChipConfig& config, int64_t m, int64_t n, int64_t k) {
  return cost_only_run(config, 0, [&](Tile& tile, SpmArena& arena) {
    const Tsr a = arena.tensor(Format::FP32, MemLayout::Tensor, {1, 1, m, k}, 2);
    const Tsr w =
        arena.tensor(Format::INT8, MemLayout::Tensor, {1, 1, n, k / kQ8_0BlockSize * int64_t(sizeof(BlockQ8_0))}, 2);
    const Tsr out = arena.tensor(Format::FP32, MemLayout::Tensor, {1, 1, m, n}, 2);
    return op_gemm_q8_0(tile, {.b_transposed = true}, a, w, nullptr, out);
  });
}

OpCost gemm_cost(const ChipConfig& config, Format in_format, int64_t m, int64_t n, int64_t k) {
  return cost_only_run(config, 0, [&](Tile& tile, SpmArena& arena) {
    const Tsr a = arena.tensor(in_format, MemLayout::Tensor, {1, 1, m, k}, 2);
    const Tsr b = arena.tensor(in_format, MemLayout::Tensor, {1, 1, k, n}, 2);
    const Tsr out = arena.tensor(Format::FP32, MemLayout::Tensor, {1, 1, m, n}, 2);
    return op_gemm(tile, {}, a, b, nullptr, out);
  });
}

}  // namespace tg::sim::oplib
