// The GemmKernels table of the instruction set this translation unit is compiled for.
//
// Not a normal header: gemm_scalar.cpp, gemm_avx2.cpp and gemm_avx512.cpp each include it once.
// Everything here has internal linkage and the templates it instantiates live in the ISA's own
// namespace (tilegraph/evg/kernel/target.h), so the three copies never meet at link time.
#include "cpu/gemm.h"
#include "tilegraph/evg/cpu/block_mmad.h"
#include "tilegraph/evg/cpu/block_scheduler.h"
#include "tilegraph/evg/kernel/callback_epilogue.h"
#include "tilegraph/evg/kernel/matmul_visitor.h"
#include "tilegraph/evg/kernel/store_epilogue.h"

namespace tg::cpu {
namespace {

using StoreGemm = evg::kernel::MatmulVisitor<evg::cpu::BlockMmad, evg::kernel::StoreEpilogue,
                                             evg::cpu::BlockScheduler>;
using CallbackGemm = evg::kernel::MatmulVisitor<evg::cpu::BlockMmad, evg::kernel::CallbackEpilogue,
                                                evg::cpu::BlockScheduler>;

void micro_kernel(int rows, int64_t kc, const float* a, const float* b, float* c, int64_t ldc,
                  bool accumulate) {
  evg::cpu::micro_kernel_for(rows)(kc, a, b, c, ldc, accumulate);
}

size_t workspace_bytes(const evg::GemmOperands& operands, int num_threads) {
  return StoreGemm::workspace_bytes(operands, num_threads);
}

void gemm(const evg::GemmShape& problem, const evg::MatrixOperand& a, const evg::MatrixOperand& b,
          float* d, int64_t ldd, const evg::Launcher& launcher, void* workspace) {
  StoreGemm::run({problem, a, b, {d, ldd}}, launcher, workspace);
}

void gemm_with_epilogue(const evg::GemmShape& problem, const evg::MatrixOperand& a,
                        const evg::MatrixOperand& b, const evg::EpilogueCallbacks& epilogue,
                        const evg::Launcher& launcher, void* workspace) {
  CallbackGemm::run({problem, a, b, epilogue}, launcher, workspace);
}

GemmKernels make_gemm_kernels(Isa isa) {
  return {isa, evg::cpu::kTileRows, evg::cpu::kTileCols, micro_kernel, workspace_bytes, gemm,
          gemm_with_epilogue};
}

}  // namespace
}  // namespace tg::cpu
