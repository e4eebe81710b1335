// Elementwise ops: binary arithmetic with broadcasting, scale, unary functions and gated units.
#include <string>
#include <utility>
#include <vector>

#include "reference_internal.h"
#include "tilegraph/core/error.h"
#include "tilegraph/core/reference.h"

namespace tg::reference::detail {

void binary(const Tensor& node) {
  const Tensor& a = *node.src[0];
  const Tensor& b = *node.src[1];
  float (*apply)(float, float) = nullptr;
  switch (node.op) {
    case Op::ADD: apply = [](float x, float y) { return x + y; }; break;
    case Op::SUB: apply = [](float x, float y) { return x - y; }; break;
    case Op::MUL: apply = [](float x, float y) { return x * y; }; break;
    case Op::DIV: apply = [](float x, float y) { return x / y; }; break;
    default: throw Error(std::string(op_name(node.op)) + ": not a binary op");
  }
  std::vector<float> row_a(size_t(a.ne[0]));
  std::vector<float> row_b(size_t(b.ne[0]));
  std::vector<float> out(size_t(node.ne[0]));
  for_each_row(node, [&](int64_t i1, int64_t i2, int64_t i3) {
    read_row(a, i1, i2, i3, row_a.data());
    read_row(b, i1 % b.ne[1], i2 % b.ne[2], i3 % b.ne[3], row_b.data());
    for (int64_t i0 = 0; i0 < node.ne[0]; ++i0) out[i0] = apply(row_a[i0], row_b[i0 % b.ne[0]]);
    write_row(node, i1, i2, i3, out.data());
  });
}

void scale(const Tensor& node) {
  const Tensor& a = *node.src[0];
  const float s = node.param_f32(0);
  const float bias = node.param_f32(1);
  std::vector<float> row(size_t(a.ne[0]));
  for_each_row(node, [&](int64_t i1, int64_t i2, int64_t i3) {
    read_row(a, i1, i2, i3, row.data());
    for (float& x : row) x = x * s + bias;
    write_row(node, i1, i2, i3, row.data());
  });
}

void unary(const Tensor& node) {
  const Tensor& a = *node.src[0];
  const auto op = UnaryOp(node.op_params[0]);
  std::vector<float> row(size_t(a.ne[0]));
  for_each_row(node, [&](int64_t i1, int64_t i2, int64_t i3) {
    read_row(a, i1, i2, i3, row.data());
    for (float& x : row) x = reference::unary(op, x);
    write_row(node, i1, i2, i3, row.data());
  });
}

void glu(const Tensor& node) {
  const Tensor& a = *node.src[0];
  const Tensor* b = node.src[1];
  const auto op = GluOp(node.op_params[0]);
  // As in ggml, `swapped` only applies to the fused form; the split form is always act(a) * b.
  const bool swapped = node.op_params[1] != 0;
  float (*activation)(float) = nullptr;
  switch (op) {
    case GluOp::SWIGLU: activation = silu; break;
    case GluOp::GEGLU: activation = gelu_tanh; break;
    default: throw Error("glu: unknown glu op " + std::to_string(int(op)));
  }
  const int64_t n = node.ne[0];
  std::vector<float> row_a(size_t(a.ne[0]));
  std::vector<float> row_b(b ? size_t(b->ne[0]) : 0);
  std::vector<float> out(static_cast<size_t>(n));
  for_each_row(node, [&](int64_t i1, int64_t i2, int64_t i3) {
    read_row(a, i1, i2, i3, row_a.data());
    const float* x = row_a.data();
    const float* g = row_a.data() + n;
    if (b) {
      read_row(*b, i1, i2, i3, row_b.data());
      g = row_b.data();
    } else if (swapped) {
      std::swap(x, g);
    }
    for (int64_t i = 0; i < n; ++i) out[i] = activation(x[i]) * g[i];
    write_row(node, i1, i2, i3, out.data());
  });
}

}  // namespace tg::reference::detail
