#pragma once
// The CPU BlockMmad: computes one block of the f32 accumulator over all of K, for the kernel
// layer (evg/kernel/matmul_visitor.h).
//
// Blocking for this CPU (Xeon, 32 KiB L1d and 1 MiB L2 per core, a large shared L3), in the
// BLIS order with A as the broadcast operand:
//   - A is packed once per problem, in panels of kTileRows rows per K block of kDepth (shared by
//     all blocks and threads): kDepth x kTileRows floats (12 KiB on AVX-512) per micro-panel,
//     which stays in L1 while the micro-kernel walks along B.
//   - Each block packs its columns of B one K block at a time into a per-thread buffer of
//     kDepth x block_cols floats (up to 384 KiB) that stays in L2 while every A panel of the block
//     passes by. Blocks are tall (up to kMaxBlockRows rows), so that this packing of B is
//     amortised over many A panels.
//   - The accumulator of a block sums over the K blocks in the caller's buffer and reaches the
//     epilogue once complete.
// M = 1 (decode) takes the GEMV path instead: nothing is packed but the row of A.
#include <algorithm>
#include <cstdint>

#include "tilegraph/evg/block.h"
#include "tilegraph/evg/cpu/gemv.h"
#include "tilegraph/evg/cpu/micro_kernel.h"
#include "tilegraph/evg/cpu/pack.h"
#include "tilegraph/evg/kernel/operand.h"
#include "tilegraph/evg/kernel/tiling.h"

namespace tg::evg::cpu {
inline namespace TG_EVG_TARGET_NAMESPACE {

class BlockMmad {
 public:
  // K per packed block: a B panel (kDepth x kTileCols, 32 KiB on AVX-512) streams from L2 while
  // the A panel (12 KiB) stays in L1.
  static constexpr int64_t kDepth = 256;
  static constexpr int64_t kMaxBlockCols = 384;
  static constexpr int64_t kMaxBlockRows = 60 * kTileRows;
  // Columns per block of the GEMV: 256 x K of B per work item.
  static constexpr int64_t kGemvBlockCols = 256;
  // A panels packed per preparation work item.
  static constexpr int64_t kPanelsPerItem = 8;

  static BlockLimits limits(const GemmShape& p) {
    if (p.m == 1) return {1, kGemvColumns, 1, kGemvBlockCols};
    return {kTileRows, kTileCols, kMaxBlockRows, kMaxBlockCols};
  }

  // Data prepared once per problem and shared by every block: the packed A (or, for M = 1, the
  // row of A as contiguous f32).
  static int64_t shared_floats(const GemmShape& p) {
    if (p.m == 1) return p.k;
    return k_blocks(p) * a_panels(p) * kDepth * kTileRows;
  }
  static int64_t prepare_items(const GemmShape& p) {
    if (p.m == 1) return p.k > 0 ? 1 : 0;
    return p.k > 0 ? (a_panels(p) + kPanelsPerItem - 1) / kPanelsPerItem : 0;
  }
  static void prepare(const MatrixOperand& a, const GemmShape& p, int64_t item, float* shared) {
    if (p.m == 1) {
      const int64_t step = a.transposed ? a.ld : 1;
      for (int64_t k = 0; k < p.k; ++k) shared[k] = load_element(a.data, a.type, k * step);
      return;
    }
    const int64_t panels = a_panels(p), kb_count = k_blocks(p);
    const int64_t end = std::min(panels, (item + 1) * kPanelsPerItem);
    for (int64_t panel = item * kPanelsPerItem; panel < end; ++panel) {
      const int rows = int(std::min<int64_t>(kTileRows, p.m - panel * kTileRows));
      for (int64_t kb = 0; kb < kb_count; ++kb) {
        const int64_t k0 = kb * kDepth;
        pack_a_panel(a, panel * kTileRows, rows, k0, std::min(kDepth, p.k - k0),
                     shared + a_panel_offset(panels, kb, panel));
      }
    }
  }

  // Per-thread scratch for blocks of `grid`: the packed B of one K block.
  static int64_t scratch_floats(const GemmShape& p, const BlockGrid& grid) {
    if (p.m == 1) return 0;
    return kDepth * round_up(grid.block_cols, kTileCols);
  }

  // acc[i * ld + j] = sum_k A(row0 + i, k) * B(k, col0 + j) for the block; acc has room for the
  // block rounded up to whole tiles, which may be written too.
  static void compute(const float* shared, const MatrixOperand& b, const GemmShape& p,
                      const BlockRect& block, float* scratch, float* acc, int64_t ld) {
    if (p.k == 0) {
      for (int64_t i = 0; i < block.rows; ++i) std::fill_n(acc + i * ld, block.cols, 0.0f);
      return;
    }
    if (p.m == 1) {
      gemv(shared, b, p.k, block.col0, block.cols, acc);
      return;
    }
    const int64_t panels = a_panels(p), first_panel = block.row0 / kTileRows;
    const int64_t block_panels = (block.rows + kTileRows - 1) / kTileRows;
    const int64_t col_panels = (block.cols + kTileCols - 1) / kTileCols;
    for (int64_t kb = 0; kb * kDepth < p.k; ++kb) {
      const int64_t k0 = kb * kDepth, kc = std::min(kDepth, p.k - k0);
      pack_b_panels(b, k0, kc, block.col0, block.cols, scratch);
      for (int64_t ip = 0; ip < block_panels; ++ip) {
        const int rows = int(std::min<int64_t>(kTileRows, block.rows - ip * kTileRows));
        const MicroKernel micro = micro_kernel_for(rows);
        const float* a = shared + a_panel_offset(panels, kb, first_panel + ip);
        float* c = acc + ip * kTileRows * ld;
        for (int64_t jp = 0; jp < col_panels; ++jp) {
          micro(kc, a, scratch + jp * kc * kTileCols, c + jp * kTileCols, ld, kb > 0);
        }
      }
    }
  }

 private:
  static int64_t round_up(int64_t n, int64_t to) { return (n + to - 1) / to * to; }
  static int64_t k_blocks(const GemmShape& p) { return (p.k + kDepth - 1) / kDepth; }
  static int64_t a_panels(const GemmShape& p) { return (p.m + kTileRows - 1) / kTileRows; }
  // Panels of one K block are adjacent, so a block's A panels stream in order.
  static int64_t a_panel_offset(int64_t panels, int64_t kb, int64_t panel) {
    return (kb * panels + panel) * kDepth * kTileRows;
  }
};

}  // namespace TG_EVG_TARGET_NAMESPACE
}  // namespace tg::evg::cpu
