// The AVX-512 GEMM with AVX512_BF16 (this file is compiled with those flags): bf16 x bf16 packs
// pairs of K and multiplies them with vdpbf16ps (evg/host/block_mmad.h).
#include "gemm_impl.h"

#if !defined(TG_EVG_TARGET_BF16_DOT)
#error "gemm_avx512_bf16.cpp is not compiled for its instruction set (see tg_layer in CMakeLists.txt)"
#endif

namespace tg::cpu {

const GemmKernels& avx512_bf16_gemm_kernels() {
  static const GemmKernels kernels = make_gemm_kernels<Isa::AVX512_BF16>();
  return kernels;
}

}  // namespace tg::cpu
