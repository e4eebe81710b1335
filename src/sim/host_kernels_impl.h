// The HostKernels table of the instruction set this translation unit is compiled for.
//
// Not a normal header: host_kernels_{portable,avx2,avx512}.cpp each include it once. Everything
// here has internal linkage and the EVG templates live in the ISA's own namespace
// (tilegraph/evg/kernel/target.h), so the copies never meet at link time.
#include <cmath>

#include "host_kernels.h"
#include "tilegraph/core/error.h"
#include "tilegraph/evg/arch/simd.h"
#include "tilegraph/evg/fusion/functional.h"
#include "tilegraph/evg/host/block_mmad.h"
#include "tilegraph/evg/host/block_scheduler.h"
#include "tilegraph/evg/kernel/matmul_visitor.h"
#include "tilegraph/evg/kernel/store_epilogue.h"

TG_EVG_DIAGNOSTICS_PUSH

namespace tg::sim {
namespace {

#if defined(TG_EVG_SIMD_AVX512)
constexpr int kLanes = 16;
#elif defined(TG_EVG_SIMD_AVX2)
constexpr int kLanes = 8;
#else
constexpr int kLanes = 4;
#endif
using V = evg::simd::Vec<float, kLanes>;

using StoreGemm =
    evg::kernel::MatmulVisitor<evg::host::BlockMmad, evg::kernel::StoreEpilogue, evg::host::BlockScheduler>;

void gemm(const evg::MatrixOperand& a, const evg::MatrixOperand& b, int64_t m, int64_t n, int64_t k, float* d,
          int64_t ldd) {
  StoreGemm::run({{m, n, k}, a, b, {d, ldd}}, evg::Launcher::serial());
}

// out = f(x) over n values: whole vectors, then the tail as one partial vector.
template <class F>
TG_EVG_INLINE void map1(const float* x, float* out, int64_t n, F f) {
  using namespace evg::simd;
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) store<kLanes>(out + i, f(load<kLanes>(x + i)));
  if (i < n) store_partial<kLanes>(out + i, f(load_partial<kLanes>(x + i, int(n - i))), int(n - i));
}

template <class F>
TG_EVG_INLINE void map2(const float* a, const float* b, float* out, int64_t n, F f) {
  using namespace evg::simd;
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) store<kLanes>(out + i, f(load<kLanes>(a + i), load<kLanes>(b + i)));
  if (i < n) {
    const int rest = int(n - i);
    store_partial<kLanes>(out + i, f(load_partial<kLanes>(a + i, rest), load_partial<kLanes>(b + i, rest)), rest);
  }
}

template <class Op>
TG_EVG_INLINE void binary_op(const float* a, const float* b, float* out, int64_t n) {
  map2(a, b, out, n, [](V x, V y) { return Op{}(x, y); });
}

// max/min as the core reference: a NaN in either operand gives NaN.
struct MaxNan {
  TG_EVG_INLINE V operator()(V a, V b) const { return evg::math::max_nan(a, b); }
};
struct MinNan {
  TG_EVG_INLINE V operator()(V a, V b) const { return evg::math::min_nan(a, b); }
};

void binary(cgra::ArithOp op, const float* a, const float* b, float* out, int64_t n) {
  switch (op) {
    case cgra::ArithOp::Add: return binary_op<evg::fn::Plus>(a, b, out, n);
    case cgra::ArithOp::Sub: return binary_op<evg::fn::Minus>(a, b, out, n);
    case cgra::ArithOp::Mul: return binary_op<evg::fn::Multiplies>(a, b, out, n);
    case cgra::ArithOp::Div: return binary_op<evg::fn::Divides>(a, b, out, n);
    case cgra::ArithOp::Max: return binary_op<MaxNan>(a, b, out, n);
    case cgra::ArithOp::Min: return binary_op<MinNan>(a, b, out, n);
  }
  throw Error("binary: unknown op");
}

template <class Op>
TG_EVG_INLINE void scalar_op(const float* a, float s, bool scalar_first, float* out, int64_t n) {
  const V vs = evg::simd::splat<kLanes>(s);
  if (scalar_first) {
    map1(a, out, n, [vs](V x) { return Op{}(vs, x); });
  } else {
    map1(a, out, n, [vs](V x) { return Op{}(x, vs); });
  }
}

void binary_scalar(cgra::ArithOp op, const float* a, float s, bool scalar_first, float* out, int64_t n) {
  switch (op) {
    case cgra::ArithOp::Add: return scalar_op<evg::fn::Plus>(a, s, scalar_first, out, n);
    case cgra::ArithOp::Sub: return scalar_op<evg::fn::Minus>(a, s, scalar_first, out, n);
    case cgra::ArithOp::Mul: return scalar_op<evg::fn::Multiplies>(a, s, scalar_first, out, n);
    case cgra::ArithOp::Div: return scalar_op<evg::fn::Divides>(a, s, scalar_first, out, n);
    case cgra::ArithOp::Max: return scalar_op<MaxNan>(a, s, scalar_first, out, n);
    case cgra::ArithOp::Min: return scalar_op<MinNan>(a, s, scalar_first, out, n);
  }
  throw Error("binary_scalar: unknown op");
}

void unary(cgra::UnaryOp op, const float* x, float* out, int64_t n) {
  using cgra::UnaryOp;
  switch (op) {
    case UnaryOp::Abs: return map1(x, out, n, [](V v) { return evg::fn::Absolute{}(v); });
    case UnaryOp::Neg: return map1(x, out, n, [](V v) { return evg::fn::Negate{}(v); });
    case UnaryOp::Relu: return map1(x, out, n, [](V v) { return evg::fn::ReLU{}(v); });
    case UnaryOp::Gelu: return map1(x, out, n, [](V v) { return evg::fn::GELU{}(v); });
    case UnaryOp::Silu: return map1(x, out, n, [](V v) { return evg::fn::SiLU{}(v); });
    case UnaryOp::Sigmoid: return map1(x, out, n, [](V v) { return evg::fn::Sigmoid{}(v); });
    case UnaryOp::Tanh: return map1(x, out, n, [](V v) { return evg::fn::Tanh{}(v); });
    case UnaryOp::Exp: return map1(x, out, n, [](V v) { return evg::fn::Exp{}(v); });
    case UnaryOp::Recip: return map1(x, out, n, [](V v) { return 1.0f / v; });
    // The compiler vectorises these loops itself (sqrtps); log has no EVG vector form.
    case UnaryOp::Sqrt:
      for (int64_t i = 0; i < n; ++i) out[i] = std::sqrt(x[i]);
      return;
    case UnaryOp::Rsqrt:
      for (int64_t i = 0; i < n; ++i) out[i] = 1.0f / std::sqrt(x[i]);
      return;
    case UnaryOp::Log:
      for (int64_t i = 0; i < n; ++i) out[i] = std::log(x[i]);
      return;
  }
  throw Error("unary: unknown op");
}

const HostKernels& make_host_kernels(const char* isa) {
  static const HostKernels kernels{isa, gemm, binary, binary_scalar, unary};
  return kernels;
}

}  // namespace
}  // namespace tg::sim

TG_EVG_DIAGNOSTICS_POP
