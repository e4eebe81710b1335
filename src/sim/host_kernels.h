#pragma once
// The host vector code behind the instructions' functional work, compiled once per instruction
// set (host_kernels_{portable,avx2,avx512}.cpp, each from host_kernels_impl.h) and chosen at run
// time, as the CPU backend chooses its GEMM tables: the GEMM is the EVG templates' (evg/kernel,
// evg/host), the element-wise functions the EVG functors on simd::Vec lanes.
#include <cstdint>

#include "tilegraph/evg/kernel/operand.h"
#include "tilegraph/sim/cgra.h"

namespace tg::sim {

struct HostKernels {
  const char* isa;
  // d[i * ldd + j] = sum_k A(i, k) B(k, j): A M x K, B K x N (either may be f32, f16 or bf16,
  // row-major or transposed as the operand says).
  void (*gemm)(const evg::MatrixOperand& a, const evg::MatrixOperand& b, int64_t m, int64_t n, int64_t k, float* d,
               int64_t ldd);
  // out[i] = a[i] op b[i]
  void (*binary)(cgra::ArithOp op, const float* a, const float* b, float* out, int64_t n);
  // out[i] = a[i] op s (s op a[i] when scalar_first)
  void (*binary_scalar)(cgra::ArithOp op, const float* a, float s, bool scalar_first, float* out, int64_t n);
  // out[i] = f(x[i])
  void (*unary)(cgra::UnaryOp op, const float* x, float* out, int64_t n);
};

// The kernels of the best instruction set this CPU runs.
const HostKernels& host_kernels();

const HostKernels& portable_host_kernels();
const HostKernels& avx2_host_kernels();
const HostKernels& avx512_host_kernels();

}  // namespace tg::sim
