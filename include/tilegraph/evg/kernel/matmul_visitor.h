#pragma once
// The kernel layer of the GEMM (Catlass's MatmulVisitor, CUTLASS's GemmUniversal):
//
//   D = epilogue(A · B),  A: M x K, B: K x N, f32 accumulation
//
// composed of three parts:
//   BlockMmad       computes one block of the accumulator over all of K (CPU: evg/host/block_mmad.h).
//   BlockEpilogue   consumes each finished block (the contract in evg/block.h; the plain store is
//                   StoreEpilogue, EVG graphs are the others).
//   BlockScheduler  cuts D into blocks and numbers them for the Launcher's threads.
//
// run() lets the BlockMmad set up what its blocks share (on the calling thread), then runs every
// block in parallel: BlockMmad::compute into the thread's accumulator buffer, then
// BlockEpilogue::visit on it while it is still in cache. Where the epilogue offers its output
// (accumulate_in_place, block.h) and the block is written once, compute sums into the output
// instead and visit finds the block there. BlockEpilogue::finish comes last.
//
// A BlockMmad type provides (all static):
//   BlockLimits limits(const GemmOperands&, const GemmTuning&);
//   size_t shared_bytes(const GemmOperands&, const BlockGrid&);   memory shared by all blocks
//   void start(const GemmOperands&, const BlockGrid&, void* shared);   on the calling thread
//   int64_t scratch_floats(const GemmOperands&, const BlockGrid&);   per thread
//   void compute(const GemmOperands&, const BlockGrid&, const BlockRect&, const GemmTuning&,
//                void* shared, float* scratch, float* acc, int64_t ld);
//       called concurrently for different blocks, with the plan's tuning (tiling.h: what the
//       caller adapts to its machine); acc receives the block's rows, its columns
//       rounded up to whole limits().tile_cols tiles (so a block whose width is whole tiles is
//       written exactly, and may be summed in the epilogue's output: block.h).
//   bool writes_accumulator_once(const GemmOperands&);
//       whether compute() writes each element of acc once and never reads it back; only then is
//       a block summed in the epilogue's output (BlockEpilogue::accumulate_in_place, block.h).
//   void compute(..., float* acc, int64_t ld, RowsDone&& rows_done);
//       the same, calling rows_done(first, count) as rows of the block become final, in order;
//       used for a BlockEpilogue that visits row strips (block.h, kVisitsRowStrips).
// A BlockScheduler type provides:
//   BlockScheduler(const GemmShape&, const BlockLimits&, int threads);
//   const BlockGrid& grid() const;  int64_t blocks() const;  BlockRect block(int64_t item) const;
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "tilegraph/core/error.h"
#include "tilegraph/evg/block.h"
#include "tilegraph/evg/kernel/operand.h"
#include "tilegraph/evg/kernel/target.h"
#include "tilegraph/evg/kernel/tiling.h"

namespace tg::evg::kernel {
inline namespace TG_EVG_TARGET_NAMESPACE {

// Runs fn(item, thread) for every item in [0, n) through the launcher.
template <class Fn>
void launch(const Launcher& launcher, int64_t n, Fn& fn) {
  if (n <= 0) return;
  launcher.parallel_for(
      launcher.pool, n, [](void* arg, int64_t item, int thread) { (*static_cast<Fn*>(arg))(item, thread); }, &fn);
}

// What a GEMM works out from the shapes, the thread count and the caller's tuning alone, never
// from the data: the block grid and the workspace layout. Callers that run the same shapes again
// (a replay plan) make it once; it does not depend on the epilogue.
template <class BlockMmad, class BlockScheduler>
struct MatmulPlan {
  // Workspace alignment run() requires.
  static constexpr size_t kAlignment = 64;
  // Floats of padding at the end of each accumulator row, so that rows a power of two apart in
  // memory do not all map to the same L1 sets.
  static constexpr int64_t kAccRowPadding = 16;

  // The workspace: the BlockMmad's shared data, then per thread an accumulator block and the
  // BlockMmad's scratch, each part aligned.
  struct Layout {
    size_t shared_bytes = 0, acc_bytes = 0, thread_bytes = 0, bytes = 0;
    int64_t acc_ld = 0;
  };

  GemmShape problem;
  bool b_transposed;  // the layout of B decides whether B is streamed or packed
  int num_threads;
  GemmTuning tuning;
  BlockScheduler scheduler;
  Layout layout;

  MatmulPlan(const GemmOperands& g, int threads, const GemmTuning& machine_tuning = {})
      : problem(g.problem),
        b_transposed(g.b.transposed),
        num_threads(threads),
        tuning(machine_tuning),
        scheduler(g.problem, BlockMmad::limits(g, machine_tuning), threads) {
    const GemmShape& p = g.problem;
    if (p.m <= 0 || p.n <= 0) return;
    const BlockLimits limits = BlockMmad::limits(g, machine_tuning);
    const BlockGrid& grid = scheduler.grid();
    const int64_t acc_rows = (grid.block_rows + limits.tile_rows - 1) / limits.tile_rows * limits.tile_rows;
    layout.acc_ld = (grid.block_cols + limits.tile_cols - 1) / limits.tile_cols * limits.tile_cols + kAccRowPadding;
    layout.shared_bytes = round_up(BlockMmad::shared_bytes(g, grid), kAlignment);
    layout.acc_bytes = round_up(size_t(acc_rows * layout.acc_ld) * sizeof(float), kAlignment);
    layout.thread_bytes =
        layout.acc_bytes + round_up(size_t(BlockMmad::scratch_floats(g, grid)) * sizeof(float), kAlignment);
    layout.bytes = layout.shared_bytes + size_t(threads) * layout.thread_bytes;
  }

  size_t workspace_bytes() const { return layout.bytes; }

 private:
  static size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }
};

template <class BlockMmad, class BlockEpilogue, class BlockScheduler>
class MatmulVisitor {
 public:
  using Plan = MatmulPlan<BlockMmad, BlockScheduler>;
  struct Arguments {
    GemmShape problem;
    MatrixOperand a;  // M x K
    MatrixOperand b;  // K x N
    typename BlockEpilogue::Arguments epilogue;
  };

  static constexpr size_t kAlignment = Plan::kAlignment;

  // Bytes of workspace run() needs for this problem on `num_threads` threads.
  static size_t workspace_bytes(const GemmOperands& operands, int num_threads) {
    return Plan(operands, num_threads).workspace_bytes();
  }

  // Runs with a workspace of its own (allocated here, freed on return).
  static void run(const Arguments& args, const Launcher& launcher) {
    check_launch(args.problem, launcher);
    const Plan plan(operands(args), launcher.num_threads);
    const size_t bytes = plan.workspace_bytes();
    std::unique_ptr<void, decltype(&std::free)> workspace(
        bytes ? std::aligned_alloc(kAlignment, round_up(bytes, kAlignment)) : nullptr, &std::free);
    if (bytes && !workspace) throw Error("matmul: cannot allocate " + std::to_string(bytes) + " bytes of workspace");
    run(plan, args, launcher, workspace.get());
  }

  // `workspace`: at least workspace_bytes() bytes, kAlignment-aligned, not used by anyone else
  // during the call.
  static void run(const Arguments& args, const Launcher& launcher, void* workspace) {
    check_launch(args.problem, launcher);
    run(Plan(operands(args), launcher.num_threads), args, launcher, workspace);
  }

  // With a plan made for args' problem, B's layout and the launcher's thread count.
  static void run(const Plan& plan, const Arguments& args, const Launcher& launcher, void* workspace) {
    check(plan, args, launcher, workspace);
    const GemmOperands g = operands(args);
    const GemmShape& p = g.problem;
    const BlockScheduler& scheduler = plan.scheduler;
    BlockEpilogue epilogue(args.epilogue, p, scheduler.grid(), launcher.num_threads);
    if (scheduler.blocks() > 0) {
      const typename Plan::Layout& layout = plan.layout;
      char* base = static_cast<char*>(workspace);
      const BlockGrid& grid = scheduler.grid();
      BlockMmad::start(g, grid, base);
      const int64_t tile_cols = BlockMmad::limits(g, plan.tuning).tile_cols;
      const bool written_once = BlockMmad::writes_accumulator_once(g);
      auto block = [&](int64_t item, int thread) {
        char* mine = base + layout.shared_bytes + size_t(thread) * layout.thread_bytes;
        float* acc = reinterpret_cast<float*>(mine);
        float* scratch = reinterpret_cast<float*>(mine + layout.acc_bytes);
        const BlockRect r = scheduler.block(item);
        int64_t ld = layout.acc_ld;
        if constexpr (accumulates_in_place()) {
          if (written_once && r.cols % tile_cols == 0) {
            int64_t output_ld = 0;
            if (float* d = epilogue.accumulate_in_place(r.row0, r.col0, output_ld)) {
              acc = d;
              ld = output_ld;
            }
          }
        }
        if constexpr (visits_row_strips()) {
          BlockMmad::compute(g, grid, r, plan.tuning, base, scratch, acc, ld, [&](int64_t first, int64_t rows) {
            epilogue.visit(AccBlock{acc + first * ld, ld, r.row0 + first, r.col0, rows, r.cols}, thread);
          });
        } else {
          BlockMmad::compute(g, grid, r, plan.tuning, base, scratch, acc, ld);
          epilogue.visit(AccBlock{acc, ld, r.row0, r.col0, r.rows, r.cols}, thread);
        }
      };
      launch(launcher, scheduler.blocks(), block);
    }
    epilogue.finish(launcher);
  }

 private:
  static constexpr bool accumulates_in_place() {
    return requires(const BlockEpilogue& e, int64_t& ld) { e.accumulate_in_place(0, 0, ld); };
  }

  static constexpr bool visits_row_strips() {
    if constexpr (requires { BlockEpilogue::kVisitsRowStrips; }) return BlockEpilogue::kVisitsRowStrips;
    return false;
  }

  static size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }
  static GemmOperands operands(const Arguments& args) { return {args.problem, args.a, args.b}; }

  static void check_operand(const char* name, const MatrixOperand& m, int64_t rows, int64_t cols) {
    if (m.ld < 0) throw Error(std::string("matmul: operand ") + name + " has a negative leading dimension");
    if (rows > 0 && cols > 0 && !m.data) throw Error(std::string("matmul: operand ") + name + " has no data");
  }

  // What a plan needs to be made.
  static void check_launch(const GemmShape& p, const Launcher& launcher) {
    if (p.m < 0 || p.n < 0 || p.k < 0) {
      throw Error("matmul: negative problem size m=" + std::to_string(p.m) + " n=" + std::to_string(p.n) +
                  " k=" + std::to_string(p.k));
    }
    if (launcher.num_threads < 1 || !launcher.parallel_for) {
      throw Error("matmul: the launcher needs a parallel_for and at least one thread");
    }
  }

  static void check(const Plan& plan, const Arguments& args, const Launcher& launcher, void* workspace) {
    const GemmShape& p = args.problem;
    check_launch(p, launcher);
    if (plan.problem.m != p.m || plan.problem.n != p.n || plan.problem.k != p.k ||
        plan.b_transposed != args.b.transposed || plan.num_threads != launcher.num_threads) {
      throw Error("matmul: the plan was made for another problem or thread count");
    }
    check_operand("A", args.a, p.m, p.k);
    check_operand("B", args.b, p.k, p.n);
    if (plan.workspace_bytes() > 0 && (!workspace || reinterpret_cast<uintptr_t>(workspace) % kAlignment != 0)) {
      throw Error("matmul: the workspace must be a " + std::to_string(kAlignment) + "-byte aligned buffer");
    }
  }
};

}  // namespace TG_EVG_TARGET_NAMESPACE
}  // namespace tg::evg::kernel
