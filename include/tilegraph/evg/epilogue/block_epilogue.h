#pragma once
// BlockEpilogue<Arch, ComputeLength, EVG>: an epilogue visitor graph as the BlockEpilogue of
// block.h (Catlass's Block layer), so MatmulVisitor can run any EVG after its main loop.
//
//   using EVG = TreeVisitor<VisitorAuxStore<float>,
//                 TreeVisitor<VisitorCompute<fn::GELU>,
//                   TreeVisitor<VisitorCompute<fn::Plus>,
//                     TreeVisitor<VisitorCompute<fn::Multiplies>, VisitorAccLoad,
//                                 VisitorScalarBroadcast<float>>,
//                     VisitorRowBroadcast<float>>>>;
//   using Epilogue = BlockEpilogue<arch::Cpu<>, 2048, EVG>;
//   Epilogue epilogue(Epilogue::Arguments{ ... }, problem, grid, num_threads);
//   ... epilogue.visit(acc_block, thread) for every block, concurrently ...
//   epilogue.finish(launcher);
//
// Each AccBlock is cut into sub-tiles of at most ComputeLength elements (whole rows of up to
// ComputeLength columns); scratch for all of the graph's buffers is allocated per thread once,
// at construction, or taken from a workspace the caller keeps across runs.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "tilegraph/core/error.h"
#include "tilegraph/evg/block.h"
#include "tilegraph/evg/fusion/graph.h"
#include "tilegraph/evg/fusion/graph_executor.h"

namespace tg::evg {

template <class Arch, int ComputeLength, class EVG>
class BlockEpilogue {
 public:
  using Graph = FlatOf<EVG>;
  using Executor = GraphExecutor<Graph, Arch, ComputeLength>;
  using Arguments = typename EVG::Arguments;

  BlockEpilogue(const Arguments& args, const GemmShape& problem, const BlockGrid& grid, int num_threads)
      : problem_(check_problem(problem, grid, num_threads)),
        grid_(grid),
        num_threads_(num_threads),
        executor_(flatten_arguments<EVG>(args), problem, grid),
        scratch_(Executor::arena_bytes(), num_threads) {}

  // The same with everything in `workspace`: workspace_bytes(problem, grid, num_threads) bytes,
  // 64-byte aligned, zeroed before its first use and afterwards used only by epilogues of this
  // type, so that repeated runs (a JIT kernel's) allocate nothing.
  BlockEpilogue(const Arguments& args, const GemmShape& problem, const BlockGrid& grid, int num_threads,
                std::byte* workspace)
      : problem_(check_problem(problem, grid, num_threads)),
        grid_(grid),
        num_threads_(num_threads),
        executor_(flatten_arguments<EVG>(args), problem, grid, check_workspace(workspace) + scratch_bytes(num_threads)),
        scratch_(workspace, Executor::arena_bytes()) {}

  // The workspace: each thread's scratch arena, then the nodes' run-long memory (reduction
  // partials), which depends on the problem and the grid.
  static size_t workspace_bytes(const GemmShape& problem, const BlockGrid& grid, int num_threads) {
    return scratch_bytes(num_threads) + Executor::workspace_bytes(problem, grid);
  }

  // Row strips of a block (block.h) fold into the block's reduction partials in row order, as
  // the whole block would: results do not change.
  static constexpr bool kVisitsRowStrips = true;

  void visit(const AccBlock& acc, int thread) {
    if (thread < 0 || thread >= num_threads_) {
      throw Error("evg: visit from thread " + std::to_string(thread) + " of an epilogue built for " +
                  std::to_string(num_threads_));
    }
    const int64_t block_row = acc.row0 / grid_.block_rows;
    const int64_t block_col = acc.col0 / grid_.block_cols;
    const int64_t block_end = std::min((block_row + 1) * grid_.block_rows, problem_.m);
    const int64_t expected_cols = std::min(grid_.block_cols, problem_.n - acc.col0);
    if (acc.row0 < 0 || acc.col0 < 0 || acc.row0 >= problem_.m || acc.col0 >= problem_.n ||
        acc.col0 % grid_.block_cols != 0 || acc.rows < 1 || acc.row0 + acc.rows > block_end ||
        acc.cols != expected_cols || acc.ld < acc.cols || !acc.data) {
      throw Error("evg: accumulator block at (" + std::to_string(acc.row0) + ", " + std::to_string(acc.col0) + ") of " +
                  std::to_string(acc.rows) + "x" + std::to_string(acc.cols) + " (ld " + std::to_string(acc.ld) +
                  ") is not a block, or a row strip of one, of the " + std::to_string(grid_.block_rows) + "x" +
                  std::to_string(grid_.block_cols) + " grid over " + std::to_string(problem_.m) + "x" +
                  std::to_string(problem_.n));
    }
    executor_.visit_block(acc, block_row, block_col, scratch_.thread(thread));
  }

  // The graph's f32 output, when a GEMM may sum blocks there before visiting them (block.h).
  float* accumulate_in_place(int64_t row0, int64_t col0, int64_t& ld) const {
    return executor_.accumulate_in_place(row0, col0, ld);
  }

  void finish(const Launcher& launcher) { executor_.finish(launcher); }

  // What each thread's scratch arena takes (the plan's sum of buffers).
  static constexpr size_t scratch_bytes_per_thread() { return Executor::arena_bytes(); }

 private:
  static GemmShape check_problem(const GemmShape& problem, const BlockGrid& grid, int num_threads) {
    if (problem.m < 0 || problem.n < 0 || problem.k < 0) {
      throw Error("evg: negative problem size " + std::to_string(problem.m) + "x" + std::to_string(problem.n) + "x" +
                  std::to_string(problem.k));
    }
    if (grid.block_rows <= 0 || grid.block_cols <= 0) {
      throw Error("evg: block grid " + std::to_string(grid.block_rows) + "x" + std::to_string(grid.block_cols) +
                  " must have positive block sizes");
    }
    if (num_threads < 1) throw Error("evg: num_threads=" + std::to_string(num_threads) + " must be at least 1");
    return problem;
  }

  static constexpr size_t scratch_bytes(int num_threads) {
    return (Arch::Scratch::bytes(Executor::arena_bytes(), num_threads) + 63) / 64 * 64;
  }

  static std::byte* check_workspace(std::byte* workspace) {
    if (!workspace || reinterpret_cast<uintptr_t>(workspace) % 64 != 0) {
      throw Error("evg: the epilogue's workspace must be a 64-byte aligned buffer");
    }
    return workspace;
  }

  GemmShape problem_;
  BlockGrid grid_;
  int num_threads_;
  Executor executor_;
  typename Arch::Scratch scratch_;
};

}  // namespace tg::evg
