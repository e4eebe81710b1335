#include "tilegraph/evg/frontend/compiled_epilogue.h"

#include <algorithm>
#include <vector>

#include "kernel_build.h"
#include "tilegraph/core/error.h"

namespace tg::evg::frontend {

CompiledEpilogue::CompiledEpilogue(std::string_view source, Signature signature, const CompileOptions& options)
    : CompiledKernel(source, std::move(signature), options, KernelKind::kEpilogueDriver) {}

void CompiledEpilogue::run(const GemmShape& problem, const BlockGrid& grid, std::span<const AccBlock> blocks,
                           const Bindings& bindings, const Launcher& launcher) const {
  own_workspace_.use([&](KernelWorkspace& workspace) { run(problem, grid, blocks, bindings, launcher, workspace); });
}

void CompiledEpilogue::run(const GemmShape& problem, const BlockGrid& grid, std::span<const AccBlock> blocks,
                           const Bindings& bindings, const Launcher& launcher, KernelWorkspace& workspace) const {
  if (problem.m < 0 || problem.n < 0) throw Error("evg: negative problem size");
  const OrderedBindings ordered(dag_, signature_, bindings, problem);
  if (grid.block_rows <= 0 || grid.block_cols <= 0) throw Error("evg: block grid sizes must be positive");
  if (launcher.num_threads < 1 || !launcher.parallel_for) throw Error("evg: the launcher has no threads");
  if (blocks.size() > UINT32_MAX) throw Error("evg: too many blocks for one launch");
  // Blocks are visited on worker threads, where a bad one could not be reported: check here.
  for (const AccBlock& b : blocks) {
    const bool ok = b.data && b.row0 >= 0 && b.col0 >= 0 && b.row0 < problem.m && b.col0 < problem.n &&
                    b.row0 % grid.block_rows == 0 && b.col0 % grid.block_cols == 0 &&
                    b.rows == std::min(grid.block_rows, problem.m - b.row0) &&
                    b.cols == std::min(grid.block_cols, problem.n - b.col0) && b.ld >= b.cols;
    if (!ok) {
      throw Error("evg: accumulator block at (" + std::to_string(b.row0) + ", " + std::to_string(b.col0) + ") of " +
                  std::to_string(b.rows) + "x" + std::to_string(b.cols) + " is not a block of the grid");
    }
  }
  driver::EpilogueParams params;
  params.problem = problem;
  params.grid = grid;
  params.blocks = blocks.data();
  params.num_blocks = int64_t(blocks.size());
  params.call.bindings = ordered.data();
  params.call.num_bindings = ordered.size();
  run_kernel(entry_, uint32_t(blocks.size()), launcher, params, workspace);
}

}  // namespace tg::evg::frontend
