#include "gemm.h"

#include <string>

#include "tilegraph/core/error.h"
#include "tilegraph/cpu/cpu_backend.h"

namespace tg::cpu {

const GemmKernels& gemm_kernels(Isa isa) {
  switch (isa) {
    case Isa::SCALAR: return scalar_gemm_kernels();
    case Isa::AVX2: return avx2_gemm_kernels();
    case Isa::AVX512:
    case Isa::AVX512_VNNI: return avx512_gemm_kernels();
    case Isa::AVX512_BF16: return avx512_bf16_gemm_kernels();
    // The AMX table's integer tiles need AMX-INT8 only; its GEMM's tiles need AMX-BF16.
    case Isa::AMX: return cpu_features().amx_bf16 ? amx_gemm_kernels() : avx512_bf16_gemm_kernels();
  }
  throw Error("cpu: unknown ISA " + std::to_string(int(isa)));
}

evg::GemmTuning gemm_tuning(evg::ElementType b_type) {
  // Decode of an 8-layer d_model-2048 model (tilegraph-bench model), Zen 5 (EPYC, family 26): f16
  // and bf16 1.18-1.22x the tokens/s with B in one pass than with 4 columns side by side, at 1
  // and 2 threads; f32 0.96-0.99x, so it keeps them. Zen 4 (EPYC, family 25): in one pass f16
  // 0.94x, bf16 1.02x; with the tile after the next prefetched too, f16 ~1.2x, bf16 and f32
  // 1.02-1.03x at one thread (prefetching only that tile: no change). Elsewhere the side-by-side
  // columns, one tile ahead, were what was measured: Sapphire Rapids' cores read DRAM faster
  // from several prefetched streams (vec.cpp), and there 8 columns rather than 4 gave f16
  // 1.03-1.10x and bf16 1.02-1.03x the tokens/s at 1 and 2 threads (f32: no change, so it keeps 4).
  const CpuFeatures& f = cpu_features();
  const bool amd = f.vendor == CpuVendor::AMD;
  if (amd && f.family >= 26) return {.streams_b_in_one_pass = b_type != evg::ElementType::F32};
  if (amd) return {.b_prefetch_tiles = 2};
  return {.b_tile_columns = b_type == evg::ElementType::F32 ? 4 : 8};
}

}  // namespace tg::cpu
