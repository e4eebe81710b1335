#pragma once
// The CPU BlockMmad: computes one block of the f32 accumulator over all of K, for the kernel
// layer (evg/kernel/matmul_visitor.h).
//
// Blocking for these CPUs (Xeon, Zen 4: 32 KiB L1d and 1 MiB L2 per core, a large shared L3), in
// the BLIS order with A as the broadcast operand, one K block of kDepth at a time:
//   - The micro-kernel broadcasts A from kTileRows rows at a time (24 KiB per K block on
//     AVX-512), reused from L2 while it walks along B. An f32 row-major A is read where it is
//     (reads_a_in_place below); any other A is packed once per problem into panels of rows,
//     converted to f32.
//   - B is packed per block into panels of kTileCols columns, kDepth x block_cols floats (up to
//     512 KiB) per K block, which stay in L2 while every A panel of the block passes by. When D
//     has several block rows, each column block of B is packed once and shared by them.
//   - Packing happens on demand (pack_once.h): whichever thread first needs a piece packs it, so
//     packing overlaps the other threads' arithmetic. Packing a piece of B from memory also
//     requests the next K block's piece, which then arrives while this one is computed.
//   - The accumulator of a block sums over the K blocks in the caller's buffer and reaches the
//     epilogue once complete.
// M = 1 (decode), and up to kGemvMaxRows rows with a column-major B (a model's weights), take the
// streaming path of gemv.h instead: nothing is packed but the rows of A, converted to f32.
// bf16 x bf16 on a target with a bf16 dot product packs pairs of K instead of f32 values
// (multiplies_bf16_pairs below): the same panels, half as deep, and twice the multiply-adds per
// instruction; streamed, the rows of A stay bf16 and the GEMV multiplies in pairs too. The AMX
// target takes such operands to AMX-BF16's tiles instead (multiplies_bf16_tiles below).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <numeric>

#include "tilegraph/evg/block.h"
#include "tilegraph/evg/host/gemv.h"
#include "tilegraph/evg/host/micro_kernel.h"
#include "tilegraph/evg/host/pack.h"
#include "tilegraph/evg/host/pack_once.h"
#include "tilegraph/evg/kernel/operand.h"
#include "tilegraph/evg/kernel/tiling.h"
#if defined(TG_EVG_TARGET_AMX)
#include "tilegraph/evg/host/amx_bf16_tiles.h"
#endif

namespace tg::evg::host {
inline namespace TG_EVG_TARGET_NAMESPACE {

class BlockMmad {
 public:
  // K per block. A B panel (kDepth x kTileCols, 64 KiB on AVX-512) streams from L2 past the A
  // rows; each line of A serves 16 steps of K from L1. 512 makes K <= 512 one block, whose
  // accumulator is written once and so summed straight into D (writes_accumulator_once): at
  // 512 cubed that copy was 4% of the time, and 256 -> 512 with A read in place gained 5%.
  static constexpr int64_t kDepth = 512;
  static constexpr int64_t kMaxBlockCols = 256;
  static constexpr int64_t kMaxBlockRows = 60 * kTileRows;
  // Columns per block of the streaming path: 256 x K of B per work item.
  static constexpr int64_t kGemvBlockCols = 256;
  // Panels packed as one piece (192 KiB of A, 256 KiB of B on AVX-512).
  static constexpr int64_t kAPanelsPerPiece = 8;
  static constexpr int64_t kBPanelsPerPiece = 4;
  // Blocks of AMX-BF16 tiles: 128 tokens' packed rows (512 KiB at K = 2048) stay in L2 while
  // panels of 32 weight rows pass by, each read from memory once per block (amx_bf16_tiles.h).
  // A panel does 2 x tokens flops per byte of weights: at the ~1.2 TFLOP/s the tiles reach on a
  // Sapphire Rapids core, blocks of 128 tokens take ~9 GB/s of weights from DRAM per core, blocks
  // of 64 would take more than a core reads (~17 GB/s).
  static constexpr int64_t kTileBlockRows = 128;
  static constexpr int64_t kTileBlockCols = 256;

  static BlockLimits limits(const GemmOperands& g, const GemmTuning& tuning) {
    if (streams_b(g)) {
      return {1, gemv_tile_columns(g.problem.m, tuning), std::max<int64_t>(1, g.problem.m), kGemvBlockCols};
    }
#if defined(TG_EVG_TARGET_AMX)
    if (multiplies_bf16_tiles(g)) {
      return {2 * amx_bf16::kGroupTokens, amx_bf16::kPanelRows, kTileBlockRows, kTileBlockCols};
    }
#endif
    return {kTileRows, kTileCols, kMaxBlockRows, kMaxBlockCols};
  }

  // Memory shared by all blocks: the packed A (streaming: the rows of A as contiguous f32), the
  // shared packed B, and the state of every piece.
  static size_t shared_bytes(const GemmOperands& g, const BlockGrid& grid) {
    return Shared(packed_view(g), grid).bytes;
  }

  // Once, on the calling thread, before any block: marks every piece unpacked (streaming:
  // converts the rows of A; AMX tiles: the pieces are the groups of 16 tokens).
  static void start(const GemmOperands& operands, const BlockGrid& grid, void* shared) {
    const GemmOperands g = packed_view(operands);
    const Shared s(g, grid);
    if (s.streams_b) {
      float* x = s.a(shared);
      const MatrixOperand& a = g.a;
      if (streams_bf16_pairs(g)) {  // the rows as they are: the GEMV multiplies them in pairs
        auto* bits = reinterpret_cast<uint16_t*>(x);
        for (int64_t i = 0; i < g.problem.m; ++i) {
          std::memcpy(bits + i * g.problem.k, static_cast<const uint16_t*>(a.data) + i * a.ld,
                      size_t(g.problem.k) * sizeof(uint16_t));
        }
        return;
      }
      constexpr int kL = Vec::kLanes;
      for (int64_t i = 0; i < g.problem.m; ++i) {
        float* row = x + i * g.problem.k;
        if (a.type == ElementType::F32 && !a.transposed) {  // the usual decode activation: one copy
          std::memcpy(row, static_cast<const float*>(a.data) + i * a.ld, size_t(g.problem.k) * sizeof(float));
          continue;
        }
        if (!a.transposed) {  // f16, or the bf16 activations of bf16 weights on other targets
          for (int64_t k = 0; k < g.problem.k; k += kL) {
            const int n = int(std::min<int64_t>(kL, g.problem.k - k));
            const void* p = element_address(a.data, a.type, i * a.ld + k);
            Vec::store_n(row + k, n == kL ? Vec::load(p, a.type) : Vec::load_n(p, a.type, n), n);
          }
          continue;
        }
        for (int64_t k = 0; k < g.problem.k; ++k) row[k] = load_element(a.data, a.type, k * a.ld + i);
      }
      return;
    }
    PackOnce::State* states = s.states(shared);
    for (int64_t i = 0; i < s.state_count; ++i) new (states + i) PackOnce::State(0);
  }

  // Whether compute() writes each accumulator element once, never reading it back: one K block,
  // or the streaming path. Summing such a block straight into D saves the epilogue's copy
  // (2048 x 2048 x 64: +20-30%); with several K blocks D's rows, ldd apart, are read back once per
  // K block, which cost up to 3% at large K.
  static bool writes_accumulator_once(const GemmOperands& g) {
    return streams_b(g) || multiplies_bf16_tiles(g) || packed_view(g).problem.k <= kDepth;
  }

  // Per-thread scratch for blocks of `grid`: the packed B of one K block, unless B is shared or
  // streamed.
  static int64_t scratch_floats(const GemmOperands& g, const BlockGrid& grid) {
    const Shared s(packed_view(g), grid);
    if (s.streams_b || s.shares_b || s.bf16_tiles) return 0;
    return kDepth * round_up(grid.block_cols, kTileCols);
  }

  // acc[i * ld + j] = sum_k A(row0 + i, k) * B(k, col0 + j) for the block; acc has room for the
  // block's columns rounded up to whole tiles, which may be written too (its rows are written
  // exactly: a short panel gets a micro-kernel for its row count). Called concurrently for
  // different blocks.
  static void compute(const GemmOperands& g, const BlockGrid& grid, const BlockRect& block, const GemmTuning& tuning,
                      void* shared, float* scratch, float* acc, int64_t ld) {
    compute(g, grid, block, tuning, shared, scratch, acc, ld, [](int64_t, int64_t) {});
  }

  // The same, calling rows_done(first, count) as soon as rows [first, first + count) of the block
  // hold their final sums, in row order (in the last K block, one strip of kTileRows rows at a
  // time): an epilogue run there finds the strip in L1/L2 instead of a whole block in L3.
  template <class RowsDone>
  static void compute(const GemmOperands& operands, const BlockGrid& grid, const BlockRect& block,
                      const GemmTuning& tuning, void* shared, float* scratch, float* acc, int64_t ld,
                      RowsDone&& rows_done) {
    const bool bf16_pairs = multiplies_bf16_pairs(operands);
    const GemmOperands g = packed_view(operands);
    const GemmShape& p = g.problem;
    const MatrixOperand &a = g.a, &b = g.b;
    const Shared s(g, grid);
    if (p.k == 0) {
      for (int64_t i = 0; i < block.rows; ++i) std::fill_n(acc + i * ld, block.cols, 0.0f);
      rows_done(0, block.rows);
      return;
    }
    if (s.streams_b) {
#if defined(TG_EVG_TARGET_BF16_DOT)
      if (streams_bf16_pairs(g)) {
        gemv_bf16_pairs(reinterpret_cast<const uint16_t*>(s.a(shared)) + block.row0 * p.k, int(block.rows), b, p.k,
                        block.col0, block.cols, acc, ld, tuning);
        rows_done(0, block.rows);
        return;
      }
#endif
      gemv(s.a(shared) + block.row0 * p.k, int(block.rows), b, p.k, block.col0, block.cols, acc, ld, tuning);
      rows_done(0, block.rows);
      return;
    }
#if defined(TG_EVG_TARGET_AMX)
    if (s.bf16_tiles) {
      multiply_bf16_tiles(g, s, block, shared, acc, ld);
      rows_done(0, block.rows);
      return;
    }
#endif
    const int64_t first_a_panel = block.row0 / kTileRows;
    const int64_t block_panels = (block.rows + kTileRows - 1) / kTileRows;
    const int64_t col_panels = (block.cols + kTileCols - 1) / kTileCols;
    for (int64_t kb = 0; kb < s.k_blocks; ++kb) {
      const int64_t k0 = kb * kDepth, kc = std::min(kDepth, p.k - k0);
      const int64_t next_kc = std::min(kDepth, p.k - k0 - kc);
      const float* b_panels;
      if (s.shares_b) {
        const int64_t first_b_panel = block.col0 / kTileCols;
        ensure_pieces(s, shared, kb, first_b_panel, first_b_panel + col_panels, false, [&](int64_t panel, int64_t end) {
          const int64_t c0 = panel * kTileCols, cols = std::min(end * kTileCols, p.n) - c0;
          pack_b_panels(b, k0, kc, c0, cols, s.b(shared) + s.b_panel_offset(kb, panel), next_kc);
        });
        b_panels = s.b(shared) + s.b_panel_offset(kb, first_b_panel);
      } else {
        pack_b_panels(b, k0, kc, block.col0, block.cols, scratch, next_kc);
        b_panels = scratch;
      }
      if (!s.reads_a_in_place) {
        const int64_t end_a_panel = first_a_panel + block_panels;
        ensure_pieces(s, shared, kb, first_a_panel, end_a_panel, true, [&](int64_t panel, int64_t end) {
          for (; panel < end; ++panel) {
            const int rows = int(std::min<int64_t>(kTileRows, p.m - panel * kTileRows));
            pack_a_panel(a, panel * kTileRows, rows, k0, kc, s.a(shared) + s.a_panel_offset(kb, panel), next_kc);
          }
        });
      }
      const int64_t lda = s.reads_a_in_place ? a.ld : kc;
      for (int64_t ip = 0; ip < block_panels; ++ip) {
        const int rows = int(std::min<int64_t>(kTileRows, block.rows - ip * kTileRows));
        const MicroKernel micro = micro_kernel_for(rows, bf16_pairs);
        const float* a_panel = s.reads_a_in_place
                                   ? static_cast<const float*>(a.data) + (block.row0 + ip * kTileRows) * a.ld + k0
                                   : s.a(shared) + s.a_panel_offset(kb, first_a_panel + ip);
        float* c = acc + ip * kTileRows * ld;
        for (int64_t jp = 0; jp < col_panels; ++jp) {
          micro(kc, a_panel, lda, b_panels + jp * kc * kTileCols, c + jp * kTileCols, ld, kb > 0);
        }
        if (kb + 1 == s.k_blocks) rows_done(ip * kTileRows, rows);
      }
    }
  }

 private:
  static int64_t round_up(int64_t n, int64_t to) { return (n + to - 1) / to * to; }
  static int64_t ceil_div(int64_t n, int64_t d) { return (n + d - 1) / d; }
  static size_t aligned(size_t bytes) { return (bytes + 63) / 64 * 64; }

  // A problem with few rows reads B once: streamed, not packed (gemv.h).
  static bool streams_b(const GemmOperands& g) {
    return g.problem.m == 1 || (g.b.transposed && g.problem.m <= kGemvMaxRows);
  }

  // A row-major f32 A (as packing sees it: bf16 pairs count) is read by the micro-kernel where it
  // is, saving the pack (4% of a 512-cubed GEMM), unless its rows fall into so few L1 sets that
  // a panel's kTileRows rows could not stay there together: rows a multiple of 4 KiB apart all
  // share one set (1024 cubed read in place: 8% slower); 2 KiB apart, two (6 of AVX-512's 12
  // rows each, as fast as packed).
  static bool reads_a_in_place(const GemmOperands& g) {
    if (g.a.type != ElementType::F32 || g.a.transposed) return false;
    constexpr int64_t kLineBytes = 64, kSets = 64, kMaxRowsPerSet = 6;
    const int64_t row_bytes = g.a.ld * int64_t(sizeof(float));
    if (row_bytes % kLineBytes != 0) return true;  // rows start at every offset within a line
    const int64_t line_stride = (row_bytes / kLineBytes) % kSets;
    const int64_t sets_visited = kSets / std::gcd(line_stride == 0 ? kSets : line_stride, kSets);
    return ceil_div(kTileRows, sets_visited) <= kMaxRowsPerSet;
  }

  // Row-major bf16 A against column-major bf16 B (activations against a model's weights), where
  // the target has a bf16 dot product: K runs along both operands' storage, so it can be taken
  // in pairs.
  static bool bf16_pair_operands(const GemmOperands& g) {
    if constexpr (!kHasBf16Dot) return false;
    return g.a.type == ElementType::BF16 && g.b.type == ElementType::BF16 && !g.a.transposed && g.b.transposed;
  }

  // Streamed, the GEMV keeps the rows of A as bf16 and multiplies in pairs (gemv.h).
  static bool streams_bf16_pairs(const GemmOperands& g) { return bf16_pair_operands(g) && streams_b(g); }

  // Packed, with each K pair starting on an even element (K and both strides even): packing moves
  // pairs as 32-bit words and the micro-kernel adds two products per instruction, twice the
  // multiply-adds of f32 FMAs.
  static bool multiplies_bf16_pairs(const GemmOperands& g) {
    return bf16_pair_operands(g) && g.problem.k % 2 == 0 && g.a.ld % 2 == 0 && g.b.ld % 2 == 0 && !streams_b(g) &&
           !multiplies_bf16_tiles(g);
  }

  // Such operands, with more rows than the few-rows path takes, on AMX-BF16's tiles where the
  // target has them: the weights are read where they are (any stride), the tokens packed once
  // per GEMM. K must be whole tile steps (amx_bf16_tiles.h).
  static bool multiplies_bf16_tiles(const GemmOperands& g) {
#if defined(TG_EVG_TARGET_AMX)
    return bf16_pair_operands(g) && !streams_b(g) && g.problem.k % amx_bf16::kDepth == 0;
#else
    (void)g;
    return false;
#endif
  }

  // The operands as packing and the micro-kernel see them. For bf16 pairs: K halved and each
  // pair one 32-bit element, typed f32 so that packing copies its bits (loads, transposes and
  // stores, no arithmetic).
  static GemmOperands packed_view(const GemmOperands& g) {
    if (!multiplies_bf16_pairs(g)) return g;
    GemmOperands v = g;
    v.problem.k /= 2;
    v.a = MatrixOperand{g.a.data, ElementType::F32, g.a.ld / 2, false};
    v.b = MatrixOperand{g.b.data, ElementType::F32, g.b.ld / 2, true};
    return v;
  }

  // Where everything shared lives: [packed A (unless read in place) | packed B (if shared) |
  // piece states]; on AMX tiles [packed token groups | their states].
  struct Shared {
    int64_t k_total = 0, k_blocks = 0, a_panels = 0, b_panels = 0, a_pieces = 0, b_pieces = 0;
    bool streams_b = false, shares_b = false, reads_a_in_place = false, bf16_tiles = false;
    size_t b_offset = 0, states_offset = 0, bytes = 0;
    int64_t state_count = 0;

    Shared(const GemmOperands& g, const BlockGrid& grid) {
      const GemmShape& p = g.problem;
      streams_b = BlockMmad::streams_b(g);
      if (streams_b) {
        bytes = aligned(size_t(p.m * p.k) * sizeof(float));
        return;
      }
#if defined(TG_EVG_TARGET_AMX)
      bf16_tiles = multiplies_bf16_tiles(g);
      if (bf16_tiles) {
        state_count = ceil_div(p.m, amx_bf16::kGroupTokens);
        states_offset = aligned(size_t(state_count) * amx_bf16::group_bytes(p.k));
        bytes = states_offset + aligned(size_t(state_count) * sizeof(PackOnce::State));
        return;
      }
#endif
      k_total = p.k;
      k_blocks = ceil_div(p.k, kDepth);
      reads_a_in_place = BlockMmad::reads_a_in_place(g);
      a_panels = ceil_div(p.m, kTileRows);
      b_panels = ceil_div(p.n, kTileCols);
      a_pieces = reads_a_in_place ? 0 : ceil_div(a_panels, kAPanelsPerPiece);
      b_pieces = ceil_div(b_panels, kBPanelsPerPiece);
      // Packing B once pays off when more than one block row would pack it.
      shares_b = grid.row_blocks(p.m) > 1;
      b_offset = reads_a_in_place ? 0 : aligned(size_t(k_blocks * a_panels * kDepth * kTileRows) * sizeof(float));
      const size_t b_bytes = shares_b ? aligned(size_t(k_blocks * b_panels * kDepth * kTileCols) * sizeof(float)) : 0;
      states_offset = b_offset + b_bytes;
      state_count = k_blocks * (a_pieces + (shares_b ? b_pieces : 0));
      bytes = states_offset + aligned(size_t(state_count) * sizeof(PackOnce::State));
    }

    float* a(void* shared) const { return static_cast<float*>(shared); }
    float* b(void* shared) const { return reinterpret_cast<float*>(static_cast<char*>(shared) + b_offset); }
    PackOnce::State* states(void* shared) const {
      return std::launder(reinterpret_cast<PackOnce::State*>(static_cast<char*>(shared) + states_offset));
    }
    PackOnce::State& state(void* shared, bool of_a, int64_t kb, int64_t piece) const {
      return states(shared)[of_a ? kb * a_pieces + piece : k_blocks * a_pieces + kb * b_pieces + piece];
    }

    // Panels of one K block are adjacent, so a block's panels are read in one stream. An A panel
    // of a short last K block fills the start of its slot (its rows kc apart); the B panels of a
    // K block follow each other densely (as pack_b_panels writes them), kc x kTileCols apart.
    int64_t a_panel_offset(int64_t kb, int64_t panel) const { return (kb * a_panels + panel) * kDepth * kTileRows; }
    int64_t b_panel_offset(int64_t kb, int64_t panel) const {
      const int64_t kc = std::min(kDepth, k_total - kb * kDepth);
      return (kb * b_panels * kDepth + panel * kc) * kTileCols;
    }
  };

  // Makes sure panels [first, end) of A (or of the shared B) for K block kb are packed: first
  // packs every piece holding some of them that nobody has claimed, with pack(panel, end), then
  // waits for those other threads are packing, so that threads needing the same panels share the
  // work.
  template <class Pack>
  static void ensure_pieces(const Shared& s, void* shared, int64_t kb, int64_t first, int64_t end, bool of_a,
                            Pack&& pack) {
    const int64_t per_piece = of_a ? kAPanelsPerPiece : kBPanelsPerPiece;
    const int64_t panels = of_a ? s.a_panels : s.b_panels;
    const int64_t piece_begin = first / per_piece, piece_end = ceil_div(end, per_piece);
    for (int64_t piece = piece_begin; piece < piece_end; ++piece) {
      PackOnce::try_pack(s.state(shared, of_a, kb, piece),
                         [&] { pack(piece * per_piece, std::min(panels, (piece + 1) * per_piece)); });
    }
    for (int64_t piece = piece_begin; piece < piece_end; ++piece) PackOnce::wait(s.state(shared, of_a, kb, piece));
  }

#if defined(TG_EVG_TARGET_AMX)
  // A block on the tiles: packs the groups of 16 tokens it covers that no other thread has, waits
  // for the rest, then multiplies. Blocks start on whole groups (limits().tile_rows).
  static void multiply_bf16_tiles(const GemmOperands& g, const Shared& s, const BlockRect& block, void* shared,
                                  float* acc, int64_t ld) {
    const int64_t k = g.problem.k, lda = g.a.ld;
    const auto* a = static_cast<const uint16_t*>(g.a.data);
    auto* groups = static_cast<uint16_t*>(shared);
    const int64_t group_elements = int64_t(amx_bf16::group_bytes(k) / sizeof(uint16_t));
    const int64_t first = block.row0 / amx_bf16::kGroupTokens;
    const int64_t end = ceil_div(block.row0 + block.rows, amx_bf16::kGroupTokens);
    PackOnce::State* states = s.states(shared);
    for (int64_t group = first; group < end; ++group) {
      PackOnce::try_pack(states[group], [&] {
        const int64_t t0 = group * amx_bf16::kGroupTokens;
        amx_bf16::pack_token_group(a + t0 * lda, lda, int(std::min<int64_t>(amx_bf16::kGroupTokens, g.problem.m - t0)),
                                   k, groups + group * group_elements);
      });
    }
    for (int64_t group = first; group < end; ++group) PackOnce::wait(states[group]);
    const auto* weights = static_cast<const uint16_t*>(g.b.data) + block.col0 * g.b.ld;
    amx_bf16::multiply_block(weights, g.b.ld, block.cols, groups + first * group_elements, block.rows, k, acc, ld);
  }
#endif
};

}  // namespace TG_EVG_TARGET_NAMESPACE
}  // namespace tg::evg::host
