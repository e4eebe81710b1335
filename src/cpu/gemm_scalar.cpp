// The portable GEMM: plain C++ for any x86-64 (the compiler may still use SSE2).
#include "gemm_impl.h"

#if !defined(TG_EVG_TARGET_PORTABLE)
#error "gemm_scalar.cpp is not compiled for its instruction set (see tg_layer in CMakeLists.txt)"
#endif

namespace tg::cpu {

const GemmKernels& scalar_gemm_kernels() {
  static const GemmKernels kernels = make_gemm_kernels<Isa::SCALAR>();
  return kernels;
}

}  // namespace tg::cpu
