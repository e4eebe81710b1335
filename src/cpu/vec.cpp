#include "vec.h"

#include <string>
#include <vector>

#include "tilegraph/core/error.h"
#include "tilegraph/cpu/cpu_backend.h"

namespace tg::cpu {

std::string_view isa_name(Isa isa) {
  switch (isa) {
    case Isa::SCALAR: return "scalar";
    case Isa::AVX2: return "avx2";
    case Isa::AVX512: return "avx512";
    case Isa::AVX512_VNNI: return "avx512_vnni";
    case Isa::AVX512_BF16: return "avx512_bf16";
    case Isa::AMX: return "amx";
  }
  return "unknown";
}

Isa best_isa() {
  const CpuFeatures& f = cpu_features();
  const bool avx2 = f.avx2 && f.fma && f.f16c;
  // The AVX-512 tables are compiled for F, BW, VL and DQ (tg_layer in CMakeLists.txt).
  if (avx2 && f.avx512f && f.avx512bw && f.avx512vl && f.avx512dq) {
    if (!f.avx512_vnni) return Isa::AVX512;
    if (!f.avx512_bf16) return Isa::AVX512_VNNI;
    return f.amx_int8 ? Isa::AMX : Isa::AVX512_BF16;
  }
  if (avx2) return Isa::AVX2;
  return Isa::SCALAR;
}

int matvec_row_streams() {
  // Decode of an 8-layer d_model-2048 model (tilegraph-bench model), one core. Sapphire Rapids:
  // q8_0 ~15 GB/s with 4 rows, ~13 with 2. Zen 4 (EPYC, family 25): q6_K ~25% and q8_0, q4_K
  // ~10-20% more tokens/s with 2 rows than with 4, whether or not the rows are prefetched. Zen 5
  // (EPYC, family 26) the other way: q4_0 1.24x, q4_1 1.32x, q5_0 1.10x the tokens/s with 4 rows,
  // the K types and q8_0 1.0-1.03x; q8_0 with 1 row 0.90x.
  const CpuFeatures& f = cpu_features();
  return f.vendor == CpuVendor::AMD && f.family <= 25 ? 2 : kMaxMatVecRowStreams;
}

bool decodes_interleaved_copies() { return cpu_features().vendor != CpuVendor::INTEL; }

std::vector<Isa> runnable_isas() {
  std::vector<Isa> isas;
  for (int i = 0; i <= int(best_isa()); ++i) isas.push_back(Isa(i));
  return isas;
}

const float* f16_to_f32_table() {
  static const std::vector<float> table = [] {
    std::vector<float> values(65536);
    for (uint32_t bits = 0; bits < 65536; ++bits) values[bits] = f16_to_f32(f16{uint16_t(bits)});
    return values;
  }();
  return table.data();
}

void throw_wrong_quant_type(DType type, const char* kernel) {
  throw Error("cpu: " + std::string(kernel) + " does not take " + std::string(dtype_name(type)));
}

QuantGemmLayout quant_gemm_layout(DType type) {
  if (type == DType::Q8_0) return kQuantGemm8;
  if (type == DType::Q6_K) return kQuantGemmQ6K;
  switch (activation_type(type)) {
    case ActivationType::Q8_K: return kQuantGemmK;
    case ActivationType::Q8_32: return kQuantGemm32;
    case ActivationType::F32:
    case ActivationType::BF16: break;
  }
  throw_wrong_quant_type(type, "the integer GEMM");
}

const VecKernels& vec_kernels(Isa isa) {
  switch (isa) {
    case Isa::SCALAR: return scalar_vec_kernels();
    case Isa::AVX2: return avx2_vec_kernels();
    case Isa::AVX512: return avx512_vec_kernels();
    case Isa::AVX512_VNNI: return avx512_vnni_vec_kernels();
    case Isa::AVX512_BF16: return avx512_bf16_vec_kernels();
    case Isa::AMX: return amx_vec_kernels();
  }
  throw Error("cpu: unknown ISA " + std::to_string(int(isa)));
}

}  // namespace tg::cpu
