#include "cpu_target.h"

#include "tilegraph/core/error.h"

namespace tg::evg::frontend {

namespace {

bool has_avx512() {
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("fma") &&
         __builtin_cpu_supports("f16c");
}

bool has_avx2() {
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
}

}  // namespace

CpuTarget native_cpu_target() {
  if (has_avx512()) return cpu_target_for_lanes(16);
  if (has_avx2()) return cpu_target_for_lanes(8);
  return cpu_target_for_lanes(4);
}

CpuTarget cpu_target_for_lanes(int lanes) {
  switch (lanes) {
    case 16:
      if (!has_avx512()) throw Error("evg: 16 lanes need AVX-512 (F, BW, VL, DQ), which this CPU lacks");
      // With AVX512_BF16 the GEMM multiplies bf16 A by bf16 B in pairs (vdpbf16ps), as the
      // backend's own GEMM does on such a CPU.
      return {16, __builtin_cpu_supports("avx512bf16") ? "avx512f,avx512bw,avx512vl,avx512dq,avx512bf16,avx2,fma,f16c"
                                                       : "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c"};
    case 8:
      if (!has_avx2()) throw Error("evg: 8 lanes need AVX2, FMA and F16C, which this CPU lacks");
      return {8, "avx2,fma,f16c"};
    // The math's simd::fma is a libm call per lane without the FMA extension.
    case 1:
    case 2:
    case 4: return {lanes, __builtin_cpu_supports("fma") ? "fma" : ""};
    default: throw Error("evg: lanes=" + std::to_string(lanes) + " (expected 1, 2, 4, 8 or 16)");
  }
}

}  // namespace tg::evg::frontend
