#pragma once
// The CPU BlockScheduler: cuts D into blocks within the BlockMmad's limits and orders them for
// the Launcher's threads, which take them one at a time (so a thread slowed by other work on a
// shared machine simply takes fewer).
//
// Rows are cut as little as the limits allow (each cut repacks B), columns as much as it takes
// to give every thread several blocks: a small-M problem (one block row) is split by columns.
// Splitting stops at a minimum amount of work per block, below which waking another thread costs
// more than it saves.
//
// Blocks are numbered so that blocks taken at the same time share neither rows nor columns: each
// thread packs its own pieces of A and B (pack_once.h) instead of waiting at every K block for a
// partner that may have lost its core to another process. The block rows go in bands of one per
// thread, and each thread's next block is the next column block of its own row (from a column of
// its own), so that it finds that row's packed A still in cache: numbered along diagonals
// instead, 4096 cubed ran 4-7% slower on one and on two Sapphire Rapids cores (likely its 64 MiB
// of packed A read again from DRAM at every block). Where a band has fewer rows than there are
// threads (one block row, or the last band), the blocks taken at the same time in one row are
// spread apart along it rather than side by side: two cores writing neighbouring column blocks of
// the same rows of D ran 10-20% slower (512 x 512 x 64 on 2 threads, fused epilogue; the likely
// cause: one core's prefetchers reaching into the other's lines).
#include <algorithm>
#include <cstdint>

#include "tilegraph/evg/block.h"
#include "tilegraph/evg/kernel/target.h"
#include "tilegraph/evg/kernel/tiling.h"

namespace tg::evg::host {
inline namespace TG_EVG_TARGET_NAMESPACE {

class BlockScheduler {
 public:
  // Multiply-adds below which a problem is not split further (tens of microseconds of work).
  static constexpr int64_t kMinBlockWork = int64_t(1) << 17;
  // With fewer blocks per thread than this, the block count is made a multiple of the thread
  // count, so that no thread is left alone with the last block.
  static constexpr int64_t kBalancedBlocksPerThread = 8;
  // Blocks per thread a split into several aims for at least, work allowing: with one block
  // each, a thread slowed for a moment (this VM's two cores run at different speeds) holds the
  // other up at the end; with four, the other takes more of them (512 x 512 x 64 on 2 threads:
  // +11% in the median call).
  static constexpr int64_t kMinBlocksPerThread = 4;

  BlockScheduler(const GemmShape& p, const BlockLimits& limits, int threads) {
    if (p.m <= 0 || p.n <= 0) {
      grid_ = {limits.tile_rows, limits.tile_cols};
      return;
    }
    const int64_t row_blocks = ceil_div(p.m, limits.max_rows);
    grid_.block_rows = round_up(ceil_div(p.m, row_blocks), limits.tile_rows);
    row_blocks_ = ceil_div(p.m, grid_.block_rows);

    // Columns in whole tiles: as few blocks as the width limit allows, more until the count is
    // balanced (a multiple of the thread count, or many) and gives every thread
    // kMinBlocksPerThread, as long as each block keeps enough work; where the work runs out
    // first, the last balanced count. A count is taken only with widths as even as whole tiles
    // allow (8 tiles in 2 blocks: 4 + 4, never 7 + 1), so no thread gets a runt block beside a
    // partner's full one.
    const int64_t col_tiles = ceil_div(p.n, limits.tile_cols);
    const int64_t max_tiles = std::max<int64_t>(1, limits.max_cols / limits.tile_cols);
    const int64_t fewest = ceil_div(col_tiles, max_tiles);
    const int64_t work = p.m * p.n * std::max<int64_t>(p.k, 1);
    const int64_t enough_blocks = threads == 1 ? 1 : kMinBlocksPerThread * threads;
    int64_t tiles = ceil_div(col_tiles, fewest);
    bool found_balanced = false;
    for (int64_t count = fewest; count <= col_tiles; ++count) {
      const int64_t width = ceil_div(col_tiles, count);
      if (ceil_div(col_tiles, width) != count) continue;  // even widths give fewer blocks
      const int64_t total = row_blocks_ * count;
      if (count > fewest && work / total < kMinBlockWork) break;
      const bool balanced = total % threads == 0 || total >= kBalancedBlocksPerThread * threads;
      if (balanced || !found_balanced) tiles = width;
      found_balanced = found_balanced || balanced;
      if (balanced && total >= enough_blocks) break;
    }
    grid_.block_cols = tiles * limits.tile_cols;
    col_blocks_ = ceil_div(col_tiles, tiles);
    m_ = p.m;
    n_ = p.n;
    threads_ = threads;
  }

  const BlockGrid& grid() const { return grid_; }
  int64_t blocks() const { return row_blocks_ * col_blocks_; }

  BlockRect block(int64_t item) const {
    // Bands of one row per thread (the last one may be shorter), walked a column step at a time:
    // the band's row r starts r * C / rows columns along (r columns where C < rows).
    const int64_t band = std::min<int64_t>(threads_, row_blocks_);
    const int64_t first_row = item / (band * col_blocks_) * band;
    const int64_t rows = std::min(band, row_blocks_ - first_row);
    const int64_t local = item - first_row * col_blocks_;
    const int64_t row = local % rows;
    int64_t step = local / rows;
    // Threads sharing a row take its steps C / s apart: steps 0, 1, 2, ... go to columns 0, C/s,
    // 2C/s, ..., 1, C/s + 1, ...
    const int64_t per_row = ceil_div(threads_, rows);
    const int64_t spread = per_row > 1 && col_blocks_ % per_row == 0 ? per_row : 1;
    step = step % spread * (col_blocks_ / spread) + step / spread;
    const int64_t bi = first_row + row;
    const int64_t bj = (step + row * std::max<int64_t>(1, col_blocks_ / rows)) % col_blocks_;
    BlockRect r;
    r.row0 = bi * grid_.block_rows;
    r.col0 = bj * grid_.block_cols;
    r.rows = std::min(grid_.block_rows, m_ - r.row0);
    r.cols = std::min(grid_.block_cols, n_ - r.col0);
    return r;
  }

 private:
  static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
  static int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }

  BlockGrid grid_;
  int64_t row_blocks_ = 0, col_blocks_ = 0;
  int64_t threads_ = 1;
  int64_t m_ = 0, n_ = 0;
};

}  // namespace TG_EVG_TARGET_NAMESPACE
}  // namespace tg::evg::host
