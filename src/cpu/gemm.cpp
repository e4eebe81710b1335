#include "gemm.h"

#include <string>

#include "tilegraph/core/error.h"

namespace tg::cpu {

const GemmKernels& gemm_kernels(Isa isa) {
  switch (isa) {
    case Isa::SCALAR: return scalar_gemm_kernels();
    case Isa::AVX2: return avx2_gemm_kernels();
    case Isa::AVX512:
    case Isa::AVX512_VNNI: return avx512_gemm_kernels();
    case Isa::AVX512_BF16:
    case Isa::AMX: return avx512_bf16_gemm_kernels();
  }
  throw Error("cpu: unknown ISA " + std::to_string(int(isa)));
}

}  // namespace tg::cpu
