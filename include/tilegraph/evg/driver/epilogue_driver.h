#pragma once
// The body of a generated epilogue kernel's `run` (lower.h): builds the BlockEpilogue from the
// bindings, visits the given accumulator blocks on the Launcher's threads, and finishes the
// reductions. Errors are reported through EpilogueParams::error, never thrown across `run`.
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
    Epilogue epilogue(make_arguments(p->bindings), p->problem, p->grid, launcher.num_threads);
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
