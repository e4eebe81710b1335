#pragma once
// The data the kernel layer passes between its parts: the problem with its operands
// (GemmOperands), what the caller adapts to its machine (GemmTuning), how a BlockMmad wants D cut
// (BlockLimits), and one block of the cut (BlockRect). Data only, shared across ISAs.
#include <cstdint>

#include "tilegraph/evg/block.h"
#include "tilegraph/evg/kernel/operand.h"

namespace tg::evg {

struct GemmOperands {
  GemmShape problem;
  MatrixOperand a;  // M x K
  MatrixOperand b;  // K x N
};

// What a GEMM adapts to the machine it runs on beyond the instruction set: chosen by the caller
// (the CPU backend, by CPU and type: cpu/gemm.cpp), kept in the plan.
struct GemmTuning {
  // A streamed B (few rows of A against a column-major B, host/gemv.h) whose columns are long
  // enough to come from memory is read one column at a time: B's columns are contiguous, so that
  // is one stream from front to back. Otherwise (false) a few columns side by side.
  bool streams_b_in_one_pass = false;
  // Such long columns are prefetched into L2 this many tiles (of columns side by side, or of one
  // column in one pass) ahead of the tile being read: 1, or 2 for both the next tile and the one
  // after it.
  int b_prefetch_tiles = 1;
  // Long columns of B read side by side against one row of A (decode): 4, or 8 (more streams,
  // which some cores read DRAM faster from). A tile's columns sum in one order, so blocks of
  // the streamed path are whole tiles of this many columns (BlockMmad::limits).
  int b_tile_columns = 4;
};

struct BlockLimits {
  int64_t tile_rows = 1;  // block sizes are multiples of the micro tile ...
  int64_t tile_cols = 1;
  int64_t max_rows = 1;  // ... and at most this large (what the caches hold)
  int64_t max_cols = 1;
};

struct BlockRect {
  int64_t row0 = 0, col0 = 0;
  int64_t rows = 0, cols = 0;
};

}  // namespace tg::evg
