#pragma once
// The body of a generated epilogue kernel's `run` (lower.h): builds the BlockEpilogue from the
// bindings, its scratch in the caller's workspace, visits the given accumulator blocks on the
// Launcher's threads, and finishes the reductions. Errors are reported through EpilogueParams::error, never thrown across `run`.
#include <cstddef>
#include <cstdio>
#include <exception>

#include "tilegraph/evg/block.h"
#include "tilegraph/evg/driver/epilogue_params.h"

namespace tg::evg::driver {

template <class Epilogue, class MakeArguments>
void run_epilogue(MakeArguments make_arguments, uint32_t block_num, void* stream, const void* params) {
  const auto* p = static_cast<const EpilogueParams*>(params);
  const auto fail = [&](const char* message) {
    if (p->error && p->error_capacity > 0) std::snprintf(p->error, p->error_capacity, "%s", message);
  };
  try {
    if (int64_t(block_num) != p->num_blocks) {
      fail("evg kernel: block_num does not match EpilogueParams::num_blocks");
      return;
    }
    const Launcher launcher = stream ? *static_cast<const Launcher*>(stream) : Launcher::serial();
    WorkspaceSizes sizes;
    sizes.epilogue_bytes = (Epilogue::workspace_bytes(launcher.num_threads) + 63) / 64 * 64;
    if (p->mode == KernelMode::kQuery) {
      if (!p->sizes) {
        fail("evg kernel: a query without EpilogueParams::sizes");
        return;
      }
      *p->sizes = sizes;
      return;
    }
    if (!p->workspace || p->workspace_bytes < sizes.total()) {
      fail("evg kernel: the workspace is smaller than the query said");
      return;
    }
    Epilogue epilogue(make_arguments(p->bindings), p->problem, p->grid, launcher.num_threads,
                      static_cast<std::byte*>(p->workspace));
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
  } catch (const std::exception& e) {
    fail(e.what());
  }
}

}  // namespace tg::evg::driver
