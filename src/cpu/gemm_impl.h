// The GemmKernels table of the instruction set this translation unit is compiled for.
//
// Not a normal header: gemm_scalar.cpp, gemm_avx2.cpp, gemm_avx512.cpp, gemm_avx512_bf16.cpp and
// gemm_amx.cpp each include it once.
// Everything here has internal linkage and the templates it instantiates live in the ISA's own
// namespace (tilegraph/evg/kernel/target.h), so the copies never meet at link time.
#include <new>
#include <type_traits>

#include "gemm.h"
#include "tilegraph/core/error.h"
#include "tilegraph/evg/host/block_mmad.h"
#include "tilegraph/evg/host/block_scheduler.h"
#include "tilegraph/evg/kernel/callback_epilogue.h"
#include "tilegraph/evg/kernel/matmul_visitor.h"
#include "tilegraph/evg/kernel/store_epilogue.h"

namespace tg::cpu {
namespace {

using StoreGemm =
    evg::kernel::MatmulVisitor<evg::host::BlockMmad, evg::kernel::StoreEpilogue, evg::host::BlockScheduler>;
using CallbackGemm =
    evg::kernel::MatmulVisitor<evg::host::BlockMmad, evg::kernel::CallbackEpilogue, evg::host::BlockScheduler>;

void micro_kernel(int rows, int64_t kc, const float* a, int64_t lda, const float* b, float* c, int64_t ldc,
                  bool accumulate) {
  evg::host::micro_kernel_for(rows)(kc, a, lda, b, c, ldc, accumulate);
}

// Both GEMMs share one plan type: it does not depend on the epilogue.
using Plan = StoreGemm::Plan;
static_assert(std::is_same_v<Plan, CallbackGemm::Plan>);
static_assert(std::is_trivially_copyable_v<Plan> && std::is_trivially_destructible_v<Plan>,
              "a GemmPlan is copied as bytes");
static_assert(sizeof(Plan) <= GemmPlan::kStorageBytes && alignof(Plan) <= alignof(GemmPlan),
              "GemmPlan::kStorageBytes is too small for this ISA's plan");

const Plan& unwrap(const GemmPlan& plan, Isa isa) {
  if (plan.isa != isa) throw Error("cpu: a GEMM plan of another instruction set");
  return *std::launder(reinterpret_cast<const Plan*>(plan.storage));
}

template <Isa kIsa>
GemmPlan plan(const evg::GemmOperands& operands, int num_threads, const evg::GemmTuning& tuning) {
  GemmPlan out;
  out.isa = kIsa;
  const Plan* made = ::new (out.storage) Plan(operands, num_threads, tuning);
  out.workspace_bytes = made->workspace_bytes();
  return out;
}

template <Isa kIsa>
void gemm(const GemmPlan& plan, const evg::MatrixOperand& a, const evg::MatrixOperand& b, float* d, int64_t ldd,
          const evg::Launcher& launcher, void* workspace) {
  const Plan& p = unwrap(plan, kIsa);
  StoreGemm::run(p, {p.problem, a, b, {d, ldd}}, launcher, workspace);
}

template <Isa kIsa>
void gemm_with_epilogue(const GemmPlan& plan, const evg::MatrixOperand& a, const evg::MatrixOperand& b,
                        const evg::EpilogueCallbacks& epilogue, const evg::Launcher& launcher, void* workspace) {
  const Plan& p = unwrap(plan, kIsa);
  CallbackGemm::run(p, {p.problem, a, b, epilogue}, launcher, workspace);
}

template <Isa kIsa>
GemmKernels make_gemm_kernels() {
  return {kIsa,       evg::host::kTileRows, evg::host::kTileCols,    micro_kernel,
          plan<kIsa>, gemm<kIsa>,           gemm_with_epilogue<kIsa>};
}

}  // namespace
}  // namespace tg::cpu
