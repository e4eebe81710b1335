// What `tilegraph info` says of the kernels the backend picks: the tiles' shapes are the tables'
// own (GemmKernels, VecKernels), the instructions named by the ISA.
#include <string>
#include <vector>

#include "gemm.h"
#include "tilegraph/cpu/cpu_backend.h"
#include "vec.h"

namespace tg::cpu {

namespace {

std::string tile(int rows, int cols) { return std::to_string(rows) + "x" + std::to_string(cols); }

// A table's integer GEMM tile: weight rows x tokens.
std::string quant_tile(const VecKernels& vec) { return tile(vec.quant_panel_rows, vec.quant_tile_tokens); }

}  // namespace

std::string cpu_kernel_table() { return std::string(isa_name(best_isa())); }

std::vector<CpuKernelChoice> cpu_kernel_choices() {
  const Isa isa = best_isa();
  const GemmKernels& gemm = gemm_kernels(isa);
  const VecKernels& vec = vec_kernels(isa);
  const bool vnni = isa >= Isa::AVX512_VNNI;
  std::string float_gemm = tile(gemm.tile_rows, gemm.tile_cols) + (isa == Isa::SCALAR   ? " portable micro-kernel"
                                                                   : isa >= Isa::AVX512 ? " AVX-512 FMA micro-kernel"
                                                                                        : " AVX2 FMA micro-kernel");
  if (gemm.isa == Isa::AMX) {
    float_gemm +=
        "; bf16 x bf16 on AMX-BF16 tiles (tdpbf16ps, 32 weight rows x 32 tokens; K not a multiple of 32: "
        "in pairs by vdpbf16ps)";
  } else if (isa >= Isa::AVX512_BF16) {
    float_gemm += "; bf16 x bf16 in pairs by vdpbf16ps";
  }
  std::string quant_prefill = quant_tile(vec) + (isa == Isa::SCALAR ? " portable tile"
                                                 : !vnni            ? " vpmaddubsw tile"
                                                                    : " vpdpbusd tile");
  if (isa == Isa::AMX) {
    quant_prefill = quant_tile(vec) +
                    " AMX-INT8 tiles (tdpbsud, tdpbssd); q6_K: " + quant_tile(avx512_vnni_vec_kernels()) +
                    " vpdpbusd tile";
  }
  // One token: the interleaved copies (prepared_weights.h) where they are faster; 2-8 tokens, a
  // weight without a copy, or a CPU that decodes without them: the stored rows.
  const std::string row_dots = std::string(isa == Isa::SCALAR ? "portable integer dot products"
                                           : vnni             ? "256-bit vpdpbusd dot products"
                                                              : "256-bit vpmaddubsw dot products") +
                               ", " + std::to_string(matvec_row_streams()) + " rows per tile";
  const std::string quant_decode =
      decodes_interleaved_copies()
          ? std::string("interleaved copies, 16 rows per ") +
                (isa == Isa::SCALAR ? "loop (portable)"
                 : vnni             ? "512-bit vpdpbusd"
                                    : "two 256-bit vpmaddubsw halves") +
                "; few tokens: " + row_dots
          : "stored rows, " + row_dots + " (no interleaved copies: slower than the rows on this CPU)";
  const evg::GemmTuning f16_tuning = gemm_tuning(evg::ElementType::F16);
  std::string float_decode =
      f16_tuning.streams_b_in_one_pass
          ? "GEMV; f16/bf16 weight rows of 2 KiB or more in one pass, the rest 4 rows side by side"
      : f16_tuning.b_tile_columns == 8
          ? "GEMV; f16/bf16 weight rows of 2 KiB or more 8 side by side, the rest 4 rows side by side"
          : "GEMV, 4 weight rows side by side";
  if (f16_tuning.b_prefetch_tiles >= 2) {
    float_decode += ", rows of 2 KiB or more prefetched into L2 one and two tiles ahead";
  }
  return {
      {"float GEMM", float_gemm},
      {"float decode", float_decode},
      {"quantized prefill", quant_prefill},
      {"quantized decode", quant_decode},
  };
}

}  // namespace tg::cpu
