#pragma once
// The GEMM of include/tilegraph/evg (kernel layer + CPU BlockMmad), compiled once per instruction
// set (gemm_scalar.cpp, gemm_avx2.cpp, gemm_avx512.cpp, gemm_avx512_bf16.cpp, gemm_amx.cpp) and chosen at run time like
// the VecKernels tables, so that one binary runs the best code the CPU supports and tests can run every table this
// machine has.
#include <cstddef>
#include <cstdint>

#include "tilegraph/evg/block.h"
#include "tilegraph/evg/kernel/callback_epilogue.h"
#include "tilegraph/evg/kernel/operand.h"
#include "tilegraph/evg/kernel/tiling.h"
#include "vec.h"

namespace tg::cpu {

// What one ISA's GEMM works out from a problem's shapes, B's layout, the thread count and the
// tuning (evg::kernel::MatmulPlan), kept opaque so that callers hold plans of any ISA in one type. A
// replay plan makes it once at capture; eager calls make it once per call.
struct GemmPlan {
  static constexpr size_t kStorageBytes = 192;
  Isa isa = Isa::SCALAR;
  size_t workspace_bytes = 0;  // 64-byte aligned workspace the GEMM needs
  alignas(16) unsigned char storage[kStorageBytes];
};

struct GemmKernels {
  Isa isa;
  // The micro tile (rows x cols) and its kernel, for a panel of `rows` rows (1 .. tile_rows):
  // c[i * ldc + j] (+)= sum_k a[i * lda + k] * b[k * tile_cols + j].
  int tile_rows, tile_cols;
  void (*micro_kernel)(int rows, int64_t kc, const float* a, int64_t lda, const float* b, float* c, int64_t ldc,
                       bool accumulate);

  // The plan for `operands` (their data pointers are not read) on `num_threads` threads, tuned as
  // `tuning` (gemm_tuning() suits this CPU).
  GemmPlan (*plan)(const evg::GemmOperands& operands, int num_threads, const evg::GemmTuning& tuning);
  // D = A · B into an f32 matrix with row stride ldd, with a plan of this table made for the
  // problem, B's layout and the launcher's thread count.
  void (*gemm)(const GemmPlan& plan, const evg::MatrixOperand& a, const evg::MatrixOperand& b, float* d, int64_t ldd,
               const evg::Launcher& launcher, void* workspace);
  // A · B through an epilogue given as callbacks.
  void (*gemm_with_epilogue)(const GemmPlan& plan, const evg::MatrixOperand& a, const evg::MatrixOperand& b,
                             const evg::EpilogueCallbacks& epilogue, const evg::Launcher& launcher, void* workspace);
};

// The table of `isa`, which the caller must have checked the CPU supports (best_isa()).
const GemmKernels& gemm_kernels(Isa isa);

// The tuning that suits this CPU for a B of `b_type`, from its vendor and family (cpu_features),
// as matvec_row_streams() for the quantized rows.
evg::GemmTuning gemm_tuning(evg::ElementType b_type);

// Defined in gemm_<isa>.cpp, each from gemm_impl.h.
const GemmKernels& scalar_gemm_kernels();
const GemmKernels& avx2_gemm_kernels();
const GemmKernels& avx512_gemm_kernels();
const GemmKernels& avx512_bf16_gemm_kernels();
const GemmKernels& amx_gemm_kernels();

}  // namespace tg::cpu
