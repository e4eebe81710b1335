#pragma once
// The body of a generated fused GEMM kernel's `run` (lower.h, KernelKind::kGemm): the CPU GEMM
// of the ISA the kernel is compiled for, MatmulVisitor<BlockMmad, Epilogue, BlockScheduler>, whose
// epilogue runs on each accumulator block while it is in cache. The epilogue's scratch and the
// GEMM's workspace come from the caller (GemmParams), so a steady run allocates nothing. Errors
// are reported through KernelCall::error, never thrown across `run` (kernel_protocol.h).
#include <cstddef>
#include <optional>

#include "tilegraph/evg/block.h"
#include "tilegraph/evg/driver/gemm_params.h"
#include "tilegraph/evg/driver/kernel_protocol.h"
#include "tilegraph/evg/host/block_mmad.h"
#include "tilegraph/evg/host/block_scheduler.h"
#include "tilegraph/evg/kernel/matmul_visitor.h"

namespace tg::evg::driver {

// A BlockEpilogue whose scratch lives in the caller's workspace (MatmulVisitor builds its
// epilogue from Arguments alone).
template <class Epilogue>
class WorkspaceEpilogue : public Epilogue {
 public:
  struct Arguments {
    typename Epilogue::Arguments epilogue;
    std::byte* workspace = nullptr;
  };

  WorkspaceEpilogue(const Arguments& args, const GemmShape& problem, const BlockGrid& grid, int num_threads)
      : Epilogue(args.epilogue, problem, grid, num_threads, args.workspace) {}
};

template <class Epilogue>
using FusedGemm = kernel::MatmulVisitor<host::BlockMmad, WorkspaceEpilogue<Epilogue>, host::BlockScheduler>;

template <class Epilogue>
WorkspaceSizes gemm_workspace_sizes(const typename FusedGemm<Epilogue>::Plan& plan) {
  constexpr size_t kAlign = 64;
  WorkspaceSizes sizes;
  sizes.epilogue_bytes =
      (Epilogue::workspace_bytes(plan.problem, plan.scheduler.grid(), plan.num_threads) + kAlign - 1) / kAlign * kAlign;
  sizes.gemm_bytes = plan.workspace_bytes();
  return sizes;
}

template <class Epilogue, class MakeArguments>
void run_gemm(MakeArguments make_arguments, uint32_t block_num, void* stream, const void* params) {
  const auto* p = static_cast<const GemmParams*>(params);
  const Launcher launcher = stream ? *static_cast<const Launcher*>(stream) : Launcher::serial();
  if (block_num != uint32_t(launcher.num_threads)) {
    report_error(p->call, "evg gemm kernel: block_num does not match the launcher's thread count");
    return;
  }
  // One plan serves the workspace sizes and the run (made inside serve, which reports what it throws).
  std::optional<typename FusedGemm<Epilogue>::Plan> plan;
  serve(
      p->call,
      [&] {
        plan.emplace(GemmOperands{p->problem, p->a, p->b}, launcher.num_threads);
        return gemm_workspace_sizes<Epilogue>(*plan);
      },
      [&](std::byte* workspace, const WorkspaceSizes& sizes) {
        FusedGemm<Epilogue>::run(*plan, {p->problem, p->a, p->b, {make_arguments(p->call.bindings), workspace}},
                                 launcher, workspace + sizes.epilogue_bytes);
      });
}

}  // namespace tg::evg::driver
