#pragma once
// The body of a generated epilogue kernel's `run` (lower.h): builds the BlockEpilogue from the
// bindings, its scratch in the caller's workspace, visits the given accumulator blocks on the
// Launcher's threads, and finishes the reductions. Errors are reported through
// KernelCall::error, never thrown across `run` (kernel_protocol.h).
#include <cstddef>

#include "tilegraph/evg/block.h"
#include "tilegraph/evg/driver/epilogue_params.h"
#include "tilegraph/evg/driver/kernel_protocol.h"

namespace tg::evg::driver {

template <class Epilogue, class MakeArguments>
void run_epilogue(MakeArguments make_arguments, uint32_t block_num, void* stream, const void* params) {
  const auto* p = static_cast<const EpilogueParams*>(params);
  if (int64_t(block_num) != p->num_blocks) {
    report_error(p->call, "evg kernel: block_num does not match EpilogueParams::num_blocks");
    return;
  }
  const Launcher launcher = stream ? *static_cast<const Launcher*>(stream) : Launcher::serial();
  const auto sizes_of = [&] {
    WorkspaceSizes sizes;
    sizes.epilogue_bytes = (Epilogue::workspace_bytes(p->problem, p->grid, launcher.num_threads) + 63) / 64 * 64;
    return sizes;
  };
  serve(p->call, sizes_of, [&](std::byte* workspace, const WorkspaceSizes&) {
    Epilogue epilogue(make_arguments(p->call.bindings), p->problem, p->grid, launcher.num_threads, workspace);
    struct Job {
      Epilogue* epilogue;
      const AccBlock* blocks;
    } job{&epilogue, p->blocks};
    launcher.parallel_for(
        launcher.pool, p->num_blocks,
        [](void* arg, int64_t item, int thread) {
          auto* j = static_cast<Job*>(arg);
          j->epilogue->visit(j->blocks[item], thread);
        },
        &job);
    epilogue.finish(launcher);
  });
}

}  // namespace tg::evg::driver
