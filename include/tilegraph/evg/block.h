#pragma once
// The contract between the GEMM's kernel layer (MatmulVisitor) and its epilogue (BlockEpilogue),
// shared by every backend. Header-only and free of backend types, so that JIT-compiled kernels
// and the simulator can include it.
//
// The output D is M x N, row-major in the epilogue's view (a column-major D is a transposed
// layout the epilogue's store nodes handle). The GEMM computes the f32 accumulator one block at
// a time and, once a block has summed over all of K, hands it to the epilogue as an AccBlock.
//
// A BlockEpilogue type E provides:
//   struct E::Arguments;       host-side description: pointers, strides, scalars.
//   E(const Arguments&, const GemmShape& problem, const BlockGrid& grid, int num_threads);
//   void visit(const AccBlock& acc, int thread);
//       LOAD / COMPUTE / STORE for one block. Called concurrently from different threads on
//       disjoint blocks, in no particular order; `thread` < num_threads selects per-thread scratch.
//   static constexpr bool kVisitsRowStrips (optional, default false);
//       true: the GEMM may instead hand over each block as row strips (all columns of the block,
//       consecutive rows), as soon as they are final: every strip of a block exactly once, in
//       row order, from one thread. The strips are then still in L1/L2.
//   float* accumulate_in_place(int64_t row0, int64_t col0, int64_t& ld) const;   (optional)
//       Where the GEMM may sum the block starting at (row0, col0), with row stride ld, instead of
//       in its own buffer: the epilogue's f32 output, which no operand of the epilogue overlaps;
//       nullptr: nowhere. The GEMM asks only for blocks it writes exactly (no tile reaching past
//       the block) and only sums there what it writes once, then visits the block (or its row
//       strips) there: the AccBlock points into the output, and the epilogue overwrites it with
//       its result on lines the sum left in cache, with no read for ownership.
//   void finish(const Launcher& launcher);
//       Called once after every block has been visited. Folds per-block reduction partials in a
//       fixed order, so results do not depend on the thread count or the schedule.
#include <cstdint>

namespace tg::evg {

struct GemmShape {
  int64_t m = 0;  // output rows
  int64_t n = 0;  // output columns
  int64_t k = 0;  // reduction length
};

// How the GEMM cuts D into blocks: block (bi, bj) covers rows [bi * block_rows, ...) and columns
// [bj * block_cols, ...); the last block in each direction may be partial.
struct BlockGrid {
  int64_t block_rows = 0;
  int64_t block_cols = 0;
  int64_t row_blocks(int64_t m) const { return block_rows ? (m + block_rows - 1) / block_rows : 0; }
  int64_t col_blocks(int64_t n) const { return block_cols ? (n + block_cols - 1) / block_cols : 0; }
};

// One accumulator block: f32, row-major with a row stride of `ld` floats, covering output rows
// [row0, row0 + rows) and columns [col0, col0 + cols).
struct AccBlock {
  const float* data;
  int64_t ld;
  int64_t row0, col0;
  int64_t rows, cols;
};

// How a kernel spreads independent work items over threads. The CPU backend passes its thread
// pool; JIT-compiled kernels receive a Launcher through `run`'s stream argument. Plain C types so
// it crosses a dlopen boundary.
struct Launcher {
  void* pool = nullptr;
  int num_threads = 1;
  // Runs fn(arg, item, thread) for every item in [0, n_items) exactly once, with thread in
  // [0, num_threads), and returns when all have finished.
  void (*parallel_for)(void* pool, int64_t n_items, void (*fn)(void* arg, int64_t item, int thread),
                       void* arg) = nullptr;

  // Runs everything on the calling thread.
  static Launcher serial() {
    Launcher l;
    l.parallel_for = [](void*, int64_t n, void (*fn)(void*, int64_t, int), void* arg) {
      for (int64_t i = 0; i < n; ++i) fn(arg, i, 0);
    };
    return l;
  }
};

}  // namespace tg::evg
