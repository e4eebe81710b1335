// The AVX-512 (F, BW, VL) GEMM (this file is compiled with those flags).
#include "gemm_impl.h"

#if !defined(TG_EVG_TARGET_AVX512)
#error "gemm_avx512.cpp is not compiled for its instruction set (see tg_layer in CMakeLists.txt)"
#endif

namespace tg::cpu {

const GemmKernels& avx512_gemm_kernels() {
  static const GemmKernels kernels = make_gemm_kernels<Isa::AVX512>();
  return kernels;
}

}  // namespace tg::cpu
