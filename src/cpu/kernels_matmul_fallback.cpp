// run_mul_mat_fallback: the MUL_MAT fallback's choice of path (matmul_fallback.h) and what its paths
// share.
#include "matmul_fallback.h"

namespace tg::cpu {

bool takes_mat_vec(const Tensor& a, const Tensor& b) {
  if (b.ne[1] == 1) return true;
  return is_quantized(a.type) && a.nb[0] == dtype_traits(a.type).type_size && b.ne[1] <= kMaxQuantTokens;
}

const float* read_activation_row(const VecKernels& vec, DType weight_type, const Tensor& b, int64_t i1, int64_t i2,
                                 int64_t i3, float* buf, uint16_t* bits) {
  if (activation_type(weight_type) != ActivationType::BF16) return read_row_f32(vec, b, i1, i2, i3, buf);
  vec.f32_to_bf16(b.ne[0], bits, read_row_f32(vec, b, i1, i2, i3, buf));
  vec.bf16_to_f32(b.ne[0], buf, bits);
  return buf;
}

bool mul_mat_uses_quant_gemm(const Tensor& node) {
  if (node.op != Op::MUL_MAT || mul_mat_uses_gemm(node)) return false;
  const Tensor& a = *node.src[0];
  const Tensor& b = *node.src[1];
  return a.ne[0] != 0 && !takes_mat_vec(a, b) && is_quantized(a.type);
}

void run_quant_matmul(const Tensor& node, std::span<const Tensor* const> epilogue_ops, ExecContext& exec) {
  quant_gemm(node, *node.src[0], *node.src[1], exec, epilogue_ops);
}

void run_mul_mat_fallback(const Tensor& node, ExecContext& exec) {
  const Tensor& a = *node.src[0];
  const Tensor& b = *node.src[1];
  if (a.ne[0] == 0) {
    // Empty sums: every output is 0.
    for_each_row(node, 0, node.nrows(), [&](int64_t i1, int64_t i2, int64_t i3) {
      std::fill_n(output_at(node, 0, i1, i2, i3), node.ne[0], 0.0f);
    });
    return;
  }
  if (takes_mat_vec(a, b)) {
    mat_vec(node, a, b, exec);
  } else if (is_quantized(a.type)) {
    quant_gemm(node, a, b, exec);
  } else {
    blocked_gemm(node, a, b, exec);
  }
}

}  // namespace tg::cpu
