// The AVX2 + FMA + F16C GEMM (this file is compiled with those flags).
#include "gemm_impl.h"

#if !defined(TG_EVG_TARGET_AVX2)
#error "gemm_avx2.cpp is not compiled for its instruction set (see tg_layer in CMakeLists.txt)"
#endif

namespace tg::cpu {

const GemmKernels& avx2_gemm_kernels() {
  static const GemmKernels kernels = make_gemm_kernels<Isa::AVX2>();
  return kernels;
}

}  // namespace tg::cpu
