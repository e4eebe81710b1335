#include "row_ops.h"

#include <algorithm>
#include <utility>

#include "row_io.h"

namespace tg::cpu {

namespace {

// Relative work per input element, for deciding how many threads a region is worth:
// transcendentals cost several plain adds, norms read each row two or three times.
int64_t row_op_cost(const Tensor& node) {
  switch (node.op) {
    case Op::UNARY:
    case Op::GLU: return 4;
    case Op::NORM:
    case Op::RMS_NORM: return 3;
    default: return 1;
  }
}

BinaryOp binary_op(Op op) {
  switch (op) {
    case Op::SUB: return BinaryOp::SUB;
    case Op::MUL: return BinaryOp::MUL;
    case Op::DIV: return BinaryOp::DIV;
    default: return BinaryOp::ADD;
  }
}

}  // namespace

bool is_row_op(Op op) {
  switch (op) {
    case Op::ADD:
    case Op::SUB:
    case Op::MUL:
    case Op::DIV:
    case Op::SCALE:
    case Op::UNARY:
    case Op::GLU:
    case Op::NORM:
    case Op::RMS_NORM: return true;
    default: return false;
  }
}

int chain_value_slot(const Tensor& node, const Tensor& chain_value) { return node.src[0] == &chain_value ? 0 : 1; }

int64_t row_op_extra_floats(const Tensor& node) {
  if (node.op == Op::GLU) return node.src[1] ? node.ne[0] : 0;
  if (is_row_op(node.op) && node.src[1]) return node.src[1]->ne[0];
  return 0;
}

void apply_row(const Tensor& node, int value_slot, const VecKernels& vec, float* out, const float* x, float* extra,
               int64_t i1, int64_t i2, int64_t i3) {
  const int64_t n = node.ne[0];
  if (value_slot == 1) {  // x is a binary op's second operand, of the node's own shape: no broadcast
    vec.binary(binary_op(node.op), n, out, read_row_f32(vec, *node.src[0], i1, i2, i3, extra), x);
    return;
  }
  switch (node.op) {
    case Op::ADD:
    case Op::SUB:
    case Op::MUL:
    case Op::DIV: {
      const Tensor& b = *node.src[1];
      const BinaryOp op = binary_op(node.op);
      const int64_t b_len = b.ne[0];
      const float* y = read_row_f32(vec, b, i1 % b.ne[1], i2 % b.ne[2], i3 % b.ne[3], extra);
      if (b_len == n) {
        vec.binary(op, n, out, x, y);
      } else if (b_len == 1) {
        vec.binary_scalar(op, n, out, x, y[0]);
      } else {
        for (int64_t s = 0; s < n; s += b_len) vec.binary(op, b_len, out + s, x + s, y);
      }
      return;
    }
    case Op::SCALE:
    case Op::UNARY:  // elementwise with no other operand: the whole row is one segment
      apply_segment(node, 0, vec, out, x, 0, n, i1, i2, i3);
      return;
    case Op::GLU: {
      // As in ggml, `swapped` applies to the halves form only; the split form is act(a) * b.
      const float* value = x;
      const float* gate = x + n;
      if (node.src[1]) {
        gate = read_row_f32(vec, *node.src[1], i1, i2, i3, extra);
      } else if (node.op_params[1] != 0) {
        std::swap(value, gate);
      }
      vec.glu(GluOp(node.op_params[0]), n, out, value, gate);
      return;
    }
    case Op::NORM: vec.norm(n, out, x, node.param_f32(0)); return;
    case Op::RMS_NORM: vec.rms_norm(n, out, x, node.param_f32(0)); return;
    default: return;
  }
}

bool is_segment_op(const Tensor& node, int value_slot) {
  if (node.type != DType::F32) return false;
  auto unit_f32_rows = [](const Tensor* t) { return t && is_f32_row_contiguous(*t); };
  if (value_slot == 1) {
    const bool binary = node.op == Op::ADD || node.op == Op::SUB || node.op == Op::MUL || node.op == Op::DIV;
    return binary && unit_f32_rows(node.src[0]);
  }
  switch (node.op) {
    case Op::ADD:
    case Op::SUB:
    case Op::MUL:
    case Op::DIV: return unit_f32_rows(node.src[1]) && (node.src[1]->ne[0] == node.ne[0] || node.src[1]->ne[0] == 1);
    case Op::SCALE:
    case Op::UNARY: return true;
    case Op::GLU: return unit_f32_rows(node.src[1]);
    default: return false;
  }
}

void apply_segment(const Tensor& node, int value_slot, const VecKernels& vec, float* out, const float* x, int64_t col,
                   int64_t n, int64_t i1, int64_t i2, int64_t i3) {
  if (value_slot == 1) {
    const float* a = reinterpret_cast<const float*>(row_ptr(*node.src[0], i1, i2, i3)) + col;
    vec.binary(binary_op(node.op), n, out, a, x);
    return;
  }
  switch (node.op) {
    case Op::ADD:
    case Op::SUB:
    case Op::MUL:
    case Op::DIV: {
      const Tensor& b = *node.src[1];
      const auto* y = reinterpret_cast<const float*>(row_ptr(b, i1 % b.ne[1], i2 % b.ne[2], i3 % b.ne[3]));
      if (b.ne[0] == 1) {
        vec.binary_scalar(binary_op(node.op), n, out, x, y[0]);
      } else {
        vec.binary(binary_op(node.op), n, out, x, y + col);
      }
      return;
    }
    case Op::GLU: {
      const auto* gate = reinterpret_cast<const float*>(row_ptr(*node.src[1], i1, i2, i3));
      vec.glu(GluOp(node.op_params[0]), n, out, x, gate + col);
      return;
    }
    case Op::SCALE: vec.scale(n, out, x, node.param_f32(0), node.param_f32(1)); return;
    case Op::UNARY: vec.unary(UnaryOp(node.op_params[0]), n, out, x); return;
    default: return;
  }
}

void run_row_op(const Tensor& node, ExecContext& exec) {
  const Tensor* chain[] = {&node};
  run_row_op_chain(chain, exec);
}

void run_row_op_chain(std::span<const Tensor* const> chain, ExecContext& exec) {
  const Tensor& head = *chain.front();
  const Tensor& last = *chain.back();
  const Tensor& a = *head.src[0];
  const VecKernels& vec = exec.vec();
  const int64_t n_in = a.ne[0], n_out = last.ne[0];
  int64_t cost = 0, extra = 0;
  for (const Tensor* node : chain) {
    cost += row_op_cost(*node);
    extra = std::max(extra, row_op_extra_floats(*node));
  }
  exec.parallel_range(last.nrows(), n_in * cost, [&](const ThreadContext& tc, int64_t begin, int64_t end) {
    float* in_buf = tc.scratch.floats(size_t(n_in + n_out + extra));
    float* out_buf = in_buf + n_in;
    float* extra_buf = out_buf + n_out;
    for_each_row(last, begin, end, [&](int64_t i1, int64_t i2, int64_t i3) {
      const float* x = read_row_f32(vec, a, i1, i2, i3, in_buf);
      float* out = output_row_f32(last, i1, i2, i3, out_buf);
      apply_row(head, 0, vec, out, x, extra_buf, i1, i2, i3);
      for (size_t k = 1; k < chain.size(); ++k) {
        apply_row(*chain[k], chain_value_slot(*chain[k], *chain[k - 1]), vec, out, out, extra_buf, i1, i2, i3);
      }
      finish_row_f32(vec, last, i1, i2, i3, out);
    });
  });
}

}  // namespace tg::cpu
