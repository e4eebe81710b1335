// The GEMM of the AMX target (this file is compiled with AMX-TILE and AMX-BF16 on top of the
// AVX512_BF16 flags): bf16 activations against bf16 weights on tdpbf16ps tiles
// (evg/host/amx_bf16_tiles.h); everything else as the AVX512_BF16 GEMM.
#include "gemm_impl.h"

#if !defined(TG_EVG_TARGET_AMX)
#error "gemm_amx.cpp is not compiled for its instruction set (see tg_layer in CMakeLists.txt)"
#endif

namespace tg::cpu {

const GemmKernels& amx_gemm_kernels() {
  static const GemmKernels kernels = make_gemm_kernels<Isa::AMX>();
  return kernels;
}

}  // namespace tg::cpu
