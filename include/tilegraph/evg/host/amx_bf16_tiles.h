#pragma once
// bf16 x bf16 on AMX-BF16's tile registers (Sapphire Rapids and later), for the BlockMmad of the
// AMX target (block_mmad.h): activations (GEMM A, row-major, one token per row) against a model's
// weights (GEMM B, column-major: one weight row per column of B, K contiguous).
//
// TDPBF16PS adds a 16 x 32 bf16 tile times a 32 x 16 one (the second stored as 16 rows of K
// pairs) into a 16 x 16 f32 tile: 8192 multiply-adds per instruction against vdpbf16ps' 32. The
// weights are the first operand, loaded straight from their rows (16 rows of 32 values, the rows'
// stride apart), so they are never packed; the tokens are the second, packed once per GEMM into
// tiles of 16 K pairs by 16 tokens (pack_token_group). The product is the transposed block,
// weight rows by tokens, which is transposed in registers on its way to the accumulator.
//
// The kernel holds a 32 x 32 block of products in the four C tiles (two tiles of weight rows by
// two of tokens), so each tile load feeds two products. It walks a panel of 32 weight rows past
// every token group of the block: the panel is read from memory once and from L2 after that,
// and the block's packed tokens (at most 128 x K) stay in L2 throughout.
//
// K must be a multiple of 32 (one tile's depth): a shorter last step would need another tile
// configuration, and loading it resets the C tiles. Other K take the vdpbf16ps micro-kernel.
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "tilegraph/evg/host/amx_tile_config.h"
#include "tilegraph/evg/host/vector.h"

#if !defined(TG_EVG_TARGET_AMX)
#error "amx_bf16_tiles.h is for the AMX target (target.h)"
#endif

namespace tg::evg::host {
inline namespace TG_EVG_TARGET_NAMESPACE {

namespace amx_bf16 {

inline constexpr int kDepth = 32;          // K values per tile product
inline constexpr int kGroupTokens = 16;    // tokens per packed group: the second operand's columns
inline constexpr int kPanelRows = 32;      // weight rows per panel: two tiles of 16
inline constexpr int kTileElements = 512;  // bf16 in one packed token tile (16 pairs x 16 tokens)

// Bytes of one packed token group over K (a multiple of kDepth).
inline size_t group_bytes(int64_t k) { return size_t(k / kDepth) * kTileElements * sizeof(uint16_t); }

// Transposes a 16 x 16 matrix of 32-bit values held as 16 rows.
TG_EVG_INLINE void transpose16(__m512 r[16]) {
  __m512 t[16];
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  auto lo = [](__m512 a, __m512 b) {
    return _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(a), _mm512_castps_pd(b)));
  };
  auto hi = [](__m512 a, __m512 b) {
    return _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(a), _mm512_castps_pd(b)));
  };
  for (int q = 0; q < 4; ++q) {
    r[4 * q] = lo(t[4 * q], t[4 * q + 2]);
    r[4 * q + 1] = hi(t[4 * q], t[4 * q + 2]);
    r[4 * q + 2] = lo(t[4 * q + 1], t[4 * q + 3]);
    r[4 * q + 3] = hi(t[4 * q + 1], t[4 * q + 3]);
  }
  for (int h = 0; h < 2; ++h) {
    for (int j = 0; j < 4; ++j) {
      t[8 * h + j] = _mm512_shuffle_f32x4(r[8 * h + j], r[8 * h + j + 4], 0x88);
      t[8 * h + j + 4] = _mm512_shuffle_f32x4(r[8 * h + j], r[8 * h + j + 4], 0xdd);
    }
  }
  for (int j = 0; j < 8; ++j) {
    r[j] = _mm512_shuffle_f32x4(t[j], t[j + 8], 0x88);
    r[j + 8] = _mm512_shuffle_f32x4(t[j], t[j + 8], 0xdd);
  }
}

// Packs `tokens` (1 .. 16) rows of bf16 activations, lda apart, over K: per step of kDepth, a
// tile whose row p holds every token's pair (2p, 2p + 1) of that step; the rows of tokens past
// `tokens` are zero.
inline void pack_token_group(const uint16_t* a, int64_t lda, int tokens, int64_t k, uint16_t* out) {
  for (int64_t step = 0; step < k / kDepth; ++step) {
    __m512 rows[16];
    for (int t = 0; t < 16; ++t) {
      rows[t] = t < tokens ? _mm512_castsi512_ps(_mm512_loadu_si512(a + t * lda + step * kDepth)) : _mm512_setzero_ps();
    }
    transpose16(rows);
    for (int p = 0; p < 16; ++p) _mm512_storeu_ps(out + step * kTileElements + p * 32, rows[p]);
  }
}

// Tiles: C 0-3 (C 2w + t: weight tile w by token tile t), weights 4-5, tokens 6-7. A panel of
// `panel_rows` (1 .. 32) weight rows uses 16 rows of weight tile 0 and the rest in tile 1 (none
// if panel_rows <= 16).
inline void configure(int panel_rows) {
  AmxTileConfig config;
  const int rows[2] = {std::min(panel_rows, 16), std::max(panel_rows - 16, 0)};
  for (int w = 0; w < 2; ++w) {
    if (rows[w] == 0) continue;
    for (int t = 0; t < 2; ++t) config.rows[2 * w + t] = uint8_t(rows[w]), config.bytes_per_row[2 * w + t] = 64;
    config.rows[4 + w] = uint8_t(rows[w]), config.bytes_per_row[4 + w] = 64;
  }
  for (int t = 6; t < 8; ++t) config.rows[t] = 16, config.bytes_per_row[t] = 64;
  _tile_loadconfig(&config);
}

// The products of one panel (kW weight tiles) and one or two token groups (kT), over all of K.
// GCC's tile intrinsics paste their tile numbers into the instruction text: hence the constants.
template <int kW, int kT>
TG_EVG_INLINE void multiply(const uint16_t* weights, int64_t ldw, const uint16_t* group0, const uint16_t* group1,
                            int64_t steps) {
  const size_t weight_stride = size_t(ldw) * sizeof(uint16_t);
  const uint16_t* w1 = weights + 16 * ldw;
  _tile_zero(0);
  if constexpr (kT == 2) _tile_zero(1);
  if constexpr (kW == 2) _tile_zero(2);
  if constexpr (kW == 2 && kT == 2) _tile_zero(3);
  for (int64_t s = 0; s < steps; ++s) {
    _tile_loadd(4, weights + s * kDepth, weight_stride);
    _tile_loadd(6, group0 + s * kTileElements, 64);
    _tile_dpbf16ps(0, 4, 6);
    if constexpr (kT == 2) {
      _tile_loadd(7, group1 + s * kTileElements, 64);
      _tile_dpbf16ps(1, 4, 7);
    }
    if constexpr (kW == 2) {
      _tile_loadd(5, w1 + s * kDepth, weight_stride);
      _tile_dpbf16ps(2, 5, 6);
      if constexpr (kT == 2) _tile_dpbf16ps(3, 5, 7);
    }
  }
}

// A C tile as stored (16 weight rows of 16 tokens' sums) into acc (a row per token): `rows`
// weight rows and `tokens` tokens of it.
TG_EVG_INLINE void store_transposed(const float* tile, int rows, int tokens, float* acc, int64_t ld) {
  __m512 r[16];
  for (int i = 0; i < 16; ++i) r[i] = _mm512_load_ps(tile + 16 * i);
  transpose16(r);
  const __mmask16 mask = __mmask16((1u << rows) - 1);
  for (int t = 0; t < tokens; ++t) _mm512_mask_storeu_ps(acc + t * ld, mask, r[t]);
}

// acc[t * ld + j] = sum_k A(t, k) B(k, j) for t < tokens, j < cols: `weights` is column j = 0 of
// B (columns ldw apart), `groups` the block's packed token groups (group_bytes(k) apart, the
// first holding token 0).
inline void multiply_block(const uint16_t* weights, int64_t ldw, int64_t cols, const uint16_t* groups, int64_t tokens,
                           int64_t k, float* acc, int64_t ld) {
  const int64_t steps = k / kDepth, group_elements = steps * kTileElements;
  alignas(64) float c[4][256];
  int configured_rows = -1;
  for (int64_t j0 = 0; j0 < cols; j0 += kPanelRows) {
    const int rows = int(std::min<int64_t>(kPanelRows, cols - j0));
    if (rows != configured_rows) configure(rows), configured_rows = rows;
    const uint16_t* panel = weights + j0 * ldw;
    for (int64_t t0 = 0; t0 < tokens; t0 += 2 * kGroupTokens) {
      const uint16_t* g0 = groups + (t0 / kGroupTokens) * group_elements;
      const bool two_groups = tokens - t0 > kGroupTokens;
      if (rows > 16) {
        two_groups ? multiply<2, 2>(panel, ldw, g0, g0 + group_elements, steps)
                   : multiply<2, 1>(panel, ldw, g0, nullptr, steps);
      } else {
        two_groups ? multiply<1, 2>(panel, ldw, g0, g0 + group_elements, steps)
                   : multiply<1, 1>(panel, ldw, g0, nullptr, steps);
      }
      _tile_stored(0, c[0], 64);
      if (two_groups) _tile_stored(1, c[1], 64);
      if (rows > 16) _tile_stored(2, c[2], 64);
      if (rows > 16 && two_groups) _tile_stored(3, c[3], 64);
      for (int w = 0; w < (rows > 16 ? 2 : 1); ++w) {
        for (int t = 0; t < (two_groups ? 2 : 1); ++t) {
          const int64_t tile_t0 = t0 + t * kGroupTokens;
          store_transposed(c[2 * w + t], std::min(16, rows - 16 * w),
                           int(std::min<int64_t>(kGroupTokens, tokens - tile_t0)), acc + tile_t0 * ld + j0 + 16 * w,
                           ld);
        }
      }
    }
  }
  // The 8 KiB of tile data would otherwise be saved and restored at every context switch.
  _tile_release();
}

}  // namespace amx_bf16

}  // namespace TG_EVG_TARGET_NAMESPACE
}  // namespace tg::evg::host
