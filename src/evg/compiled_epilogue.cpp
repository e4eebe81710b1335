#include "tilegraph/evg/frontend/compiled_epilogue.h"

#include <algorithm>
#include <vector>

#include "evg/cpu_target.h"
#include "tilegraph/core/error.h"
#include "tilegraph/jit/compiler.h"

namespace tg::evg::frontend {

Binding Binding::matrix(const void* data, int64_t ld) { return strided(data, ld, 1); }

Binding Binding::column_major(const void* data, int64_t ld) { return strided(data, 1, ld); }

Binding Binding::strided(const void* data, int64_t row_stride, int64_t col_stride) {
  Binding b;
  b.data = const_cast<void*>(data);
  b.row_stride = row_stride;
  b.col_stride = col_stride;
  return b;
}

Binding Binding::vector(const void* data, int64_t stride) { return strided(data, stride, stride); }

Binding Binding::value(float value) {
  Binding b;
  b.scalar = value;
  return b;
}

CompiledEpilogue::CompiledEpilogue(std::string_view source, Signature signature, const CompileOptions& options)
    : signature_(std::move(signature)), dag_(build_dag(source, signature_)) {
  if (options.compute_length < 16 || options.compute_length % 16 != 0 || options.compute_length > (1 << 20)) {
    throw Error("evg: compute_length=" + std::to_string(options.compute_length) +
                " (expected a multiple of 16 from 16 to 1048576)");
  }
  const CpuTarget target = options.lanes == 0 ? native_cpu_target() : cpu_target_for_lanes(options.lanes);
  lanes_ = target.lanes;
  LowerOptions lower;
  lower.lanes = target.lanes;
  lower.target = target.pragma_target;
  lower.fuse_compute = options.fuse_compute;
  lower.compute_length = options.compute_length;
  lower.source_text = std::string(source);
  cpp_ = lower_to_cpp(dag_, lower);
  jit::Compiler& compiler = options.compiler ? *options.compiler : jit::Compiler::instance();
  const jit::Kernel kernel = compiler.load_source(cpp_, {}, jit::KernelType::kCpu);
  entry_ = kernel.entry;
  kernel_id_ = kernel.id;
}

void CompiledEpilogue::run(const GemmShape& problem, const BlockGrid& grid, std::span<const AccBlock> blocks,
                           const std::map<std::string, Binding, std::less<>>& bindings,
                           const Launcher& launcher) const {
  std::vector<driver::Binding> ordered;
  for (const OperandDecl& d : dag_.operands) {
    const auto it = bindings.find(d.name);
    if (it == bindings.end()) throw Error("evg: no binding for " + std::string(kind_name(d.kind)) + " '" + d.name + "'");
    ordered.push_back(it->second);
  }
  for (const auto& [name, binding] : bindings) {
    if (!signature_.find_input(name) && !signature_.find_output(name)) {
      throw Error("evg: binding for '" + name + "', which the epilogue does not declare");
    }
  }
  if (problem.m < 0 || problem.n < 0) throw Error("evg: negative problem size");
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
  char error[512] = "";
  driver::EpilogueParams params;
  params.problem = problem;
  params.grid = grid;
  params.blocks = blocks.data();
  params.num_blocks = int64_t(blocks.size());
  params.bindings = ordered.data();
  params.num_bindings = int64_t(ordered.size());
  params.error = error;
  params.error_capacity = sizeof error;
  entry_(uint32_t(blocks.size()), const_cast<Launcher*>(&launcher), &params);
  if (error[0]) throw Error(error);
}

}  // namespace tg::evg::frontend
