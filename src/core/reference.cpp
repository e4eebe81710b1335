#include "tilegraph/core/reference.h"

#include <cmath>
#include <cstring>
#include <numbers>
#include <string>

#include "reference_internal.h"
#include "tilegraph/core/error.h"

namespace tg::reference {

namespace detail {

int64_t unit_elems(DType type) { return int64_t(dtype_traits(type).block_size); }
size_t unit_bytes(DType type) { return dtype_traits(type).type_size; }

char* row_ptr(const Tensor& t, int64_t i1, int64_t i2, int64_t i3) {
  return static_cast<char*>(t.element_ptr(0, i1, i2, i3));
}

void read_row(const Tensor& t, int64_t i1, int64_t i2, int64_t i3, float* out) {
  const int64_t elems = unit_elems(t.type);
  const char* row = row_ptr(t, i1, i2, i3);
  for (int64_t u = 0; u < t.ne[0] / elems; ++u) {
    row_to_f32(t.type, row + u * t.nb[0], out + u * elems, elems);
  }
}

void write_row(const Tensor& t, int64_t i1, int64_t i2, int64_t i3, const float* in) {
  const int64_t elems = unit_elems(t.type);
  char* row = row_ptr(t, i1, i2, i3);
  for (int64_t u = 0; u < t.ne[0] / elems; ++u) {
    row_from_f32(t.type, in + u * elems, row + u * t.nb[0], elems);
  }
}

void copy_row(const Tensor& src, int64_t s1, int64_t s2, int64_t s3, const Tensor& dst, int64_t d1, int64_t d2,
              int64_t d3) {
  if (src.type == dst.type) {
    const size_t bytes = unit_bytes(src.type);
    const char* from = row_ptr(src, s1, s2, s3);
    char* to = row_ptr(dst, d1, d2, d3);
    for (int64_t u = 0; u < src.ne[0] / unit_elems(src.type); ++u) {
      std::memcpy(to + u * dst.nb[0], from + u * src.nb[0], bytes);
    }
    return;
  }
  std::vector<float> row(size_t(src.ne[0]));
  read_row(src, s1, s2, s3, row.data());
  write_row(dst, d1, d2, d3, row.data());
}

std::vector<float> read_all(const Tensor& t) {
  std::vector<float> values(size_t(t.nelements()));
  float* out = values.data();
  for_each_row(t, [&](int64_t i1, int64_t i2, int64_t i3) {
    read_row(t, i1, i2, i3, out);
    out += t.ne[0];
  });
  return values;
}

void write_all(const Tensor& t, std::span<const float> values) {
  const float* in = values.data();
  for_each_row(t, [&](int64_t i1, int64_t i2, int64_t i3) {
    write_row(t, i1, i2, i3, in);
    in += t.ne[0];
  });
}

int32_t read_i32(const Tensor& t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
  int32_t value;
  std::memcpy(&value, t.element_ptr(i0, i1, i2, i3), sizeof value);
  return value;
}

namespace {

void check_data(const Tensor& node) {
  auto missing = [&](const Tensor& t, const std::string& role) {
    throw Error(std::string(op_name(node.op)) + ": " + role + " has no data (" + describe(t) + ")");
  };
  if (!node.data) missing(node, "the node");
  for (int i = 0; i < kMaxSrc; ++i) {
    const Tensor* s = node.src[i];
    if (s && !s->data && !s->is_empty()) missing(*s, "src[" + std::to_string(i) + "]");
  }
}

}  // namespace

}  // namespace detail

void compute_node(const Tensor& node) {
  if (node.is_noop()) return;
  detail::check_data(node);
  switch (node.op) {
    case Op::MUL_MAT: return detail::mul_mat(node);
    case Op::ADD:
    case Op::SUB:
    case Op::MUL:
    case Op::DIV: return detail::binary(node);
    case Op::SCALE: return detail::scale(node);
    case Op::UNARY: return detail::unary(node);
    case Op::GLU: return detail::glu(node);
    case Op::NORM: return detail::norm(node);
    case Op::RMS_NORM: return detail::rms_norm(node);
    case Op::SOFT_MAX: return detail::soft_max(node);
    case Op::ROPE: return detail::rope(node);
    case Op::GET_ROWS: return detail::get_rows(node);
    case Op::SET_ROWS: return detail::set_rows(node);
    case Op::CPY:
    case Op::CONT: return detail::copy(node);
    case Op::FLASH_ATTN_EXT: return detail::flash_attn_ext(node);
    case Op::SUM_ROWS: return detail::sum_rows(node);
    case Op::ARGMAX: return detail::argmax(node);
    case Op::BATCH_NORM: return detail::batch_norm(node);
    case Op::CONV_2D: return detail::conv_2d(node);
    case Op::POOL_2D: return detail::pool_2d(node);
    case Op::CONCAT: return detail::concat(node);
    case Op::NONE:
    case Op::VIEW:
    case Op::RESHAPE:
    case Op::PERMUTE:
    case Op::TRANSPOSE: return;  // is_noop() already returned; listed so the switch is complete
  }
  throw Error("compute_node: unknown op " + std::to_string(int(node.op)) + " (" + describe(node) + ")");
}

void compute_graph(const Graph& graph) {
  for (const Tensor* node : graph.nodes()) compute_node(*node);
}

// 0.5 x (1 + tanh(u)) == x / (1 + exp(-2u)): the second form does not cancel for negative x,
// evaluated in double so the oracle stays accurate where float kernels lose digits.
float gelu_tanh(float x) {
  if (std::isinf(x)) return x > 0 ? x : -0.0f;  // the limits, not inf / inf
  const double sqrt_2_over_pi = std::numbers::sqrt2 * std::numbers::inv_sqrtpi;
  const double u = sqrt_2_over_pi * (double(x) + 0.044715 * double(x) * x * x);
  return float(double(x) / (1.0 + std::exp(-2.0 * u)));
}

float silu(float x) { return x / (1.0f + std::exp(-x)); }

float unary(UnaryOp op, float x) {
  switch (op) {
    case UnaryOp::RELU: return x > 0.0f ? x : 0.0f;
    case UnaryOp::GELU: return gelu_tanh(x);
    case UnaryOp::GELU_ERF:                         // erfc keeps the precision that 1 + erf(x) loses for negative x
      if (std::isinf(x)) return x > 0 ? x : -0.0f;  // the limits, not -inf * 0
      return float(0.5 * double(x) * std::erfc(-double(x) / std::numbers::sqrt2));
    case UnaryOp::SILU: return silu(x);
    case UnaryOp::SIGMOID: return 1.0f / (1.0f + std::exp(-x));
    case UnaryOp::TANH: return std::tanh(x);
    case UnaryOp::EXP: return std::exp(x);
    case UnaryOp::NEG: return -x;
    case UnaryOp::ABS: return std::fabs(x);
    case UnaryOp::SQRT: return std::sqrt(x);
    case UnaryOp::RSQRT: return 1.0f / std::sqrt(x);
  }
  throw Error("unary: unknown unary op " + std::to_string(int(op)));
}

}  // namespace tg::reference
