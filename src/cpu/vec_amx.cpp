// The AMX table: the AVX512_BF16 table with the integer GEMM's tiles (vec.h: quant_gemm_tiles)
// on AMX-INT8's tile registers, for Sapphire Rapids and later. One tile instruction multiplies up
// to 16 tokens by 16 weight rows over 32 elements (TDPBSUD: signed activations by unsigned
// quants; TDPBSSD for q8_0's signed quants), exactly in int32, where vpdpbusd takes 8
// instructions per token for the same. The panel the AVX-512 tables pack (one weight row per
// 32-bit lane, 4 consecutive elements per lane) is already the tile's B layout, and the tokens'
// quantized rows, one stride apart, are its A rows.
//
// Each block's (K types: each sub-block of 32's) integer sums go from the C tile to memory and
// are folded into f32 as the AVX512_VNNI tile folds them, in the same order, so the two tables
// give the same bits. q6_K's scales change every 16 elements, too short for a tile: it keeps the
// AVX512_VNNI tile.
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "simd.h"
#include "tilegraph/cpu/cpu_backend.h"
#include "tilegraph/evg/host/amx_tile_config.h"
#include "vec.h"

#if !defined(__AMX_INT8__) || !defined(__AMX_TILE__)
#error "vec_amx.cpp is not compiled for its instruction set (see tg_layer in CMakeLists.txt)"
#endif

namespace tg::cpu {

namespace amx {

using GL = simd::GemmLanesAvx512;
constexpr int kLanes = GL::kLanes;  // weight rows: the C tile's columns
constexpr int kTokens = 16;         // at most the C and A tiles' rows
constexpr int kK = 32;              // elements per tile product: a 32-block, or a K type's sub-block
// C tiles: products in flight while earlier ones are stored and folded (a tile product's latency
// is several of its issue intervals).
constexpr int kSlots = 4;

// Fixed roles: C tiles 0-3, A tiles 4-5 and B tiles 6-7 (alternating, so that one product's
// operands load while the previous one multiplies). A and C have a row per token. Loaded at
// every row of tiles rather than once per thread: another AMX user in the process (oneDNN,
// torch) may configure or release the tiles between two calls on the same thread.
void configure_tiles(int tokens) {
  evg::host::AmxTileConfig config;
  for (int c = 0; c < kSlots; ++c) config.bytes_per_row[c] = kLanes * 4, config.rows[c] = uint8_t(tokens);
  for (int a = 4; a < 6; ++a) config.bytes_per_row[a] = kK, config.rows[a] = uint8_t(tokens);
  for (int b = 6; b < 8; ++b) config.bytes_per_row[b] = kLanes * 4, config.rows[b] = kK / 4;
  _tile_loadconfig(&config);
}

// C tile c = the A tile at `a` (a row per token, `a_stride` apart, 32 bytes each) times the B
// tile at `b` (8 rows of 64 bytes, contiguous), through A tile ta and B tile tb. GCC's tile
// intrinsics paste their tile numbers into the instruction text, so they are macro arguments.
#define TG_AMX_PRODUCT(c, ta, tb)   \
  do {                              \
    _tile_loadd(ta, a, a_stride);   \
    _tile_loadd(tb, b, kLanes * 4); \
    _tile_zero(c);                  \
    if constexpr (kSignedWeights) { \
      _tile_dpbssd(c, ta, tb);      \
    } else {                        \
      _tile_dpbsud(c, ta, tb);      \
    }                               \
  } while (false)

template <bool kSignedWeights>
inline void multiply(int slot, const uint8_t* a, size_t a_stride, const uint8_t* b) {
  switch (slot) {
    case 0: TG_AMX_PRODUCT(0, 4, 6); break;
    case 1: TG_AMX_PRODUCT(1, 5, 7); break;
    case 2: TG_AMX_PRODUCT(2, 4, 6); break;
    default: TG_AMX_PRODUCT(3, 5, 7); break;
  }
}
#undef TG_AMX_PRODUCT

// Product `slot`'s sums to sums [tokens][kLanes].
inline void store_sums(int slot, int32_t* sums) {
  switch (slot) {
    case 0: _tile_stored(0, sums, kLanes * 4); break;
    case 1: _tile_stored(1, sums, kLanes * 4); break;
    case 2: _tile_stored(2, sums, kLanes * 4); break;
    default: _tile_stored(3, sums, kLanes * 4); break;
  }
}

// The tokens as the folds and the A tiles read them, gathered once per row of tiles: per block,
// its quants [kPerBlock][tokens][32] (each A tile 32 contiguous bytes a row, which loads faster
// than rows a token's whole record apart), and the floats the folds take for all 16 tokens from
// one pointer: dx [kTokens], then (unsigned weights) each group's sum [groups][kTokens]; tokens
// past `tokens` have 0.
template <QuantGemmLayout L>
class TokenBlocks {
 public:
  static constexpr int kFloatsPerBlock = (L.signed_quants ? 1 : 1 + L.block / L.group) * kTokens;
  // In place, without the heap, for the GEMM's rows of tiles (kBlockK = 256 elements of K).
  static constexpr int kLocalBlocks = 256 / L.block;

  TokenBlocks(int64_t blocks, int tokens, const uint8_t* x, size_t x_stride) : tokens_(tokens) {
    const size_t quant_bytes = size_t(blocks) * L.block * size_t(tokens);
    const size_t float_count = size_t(blocks) * kFloatsPerBlock;
    if (blocks > kLocalBlocks) {
      heap_quants_.resize(quant_bytes);
      heap_floats_.resize(float_count);
      quants_ = heap_quants_.data();
      floats_ = heap_floats_.data();
    }
    if (tokens < kTokens) std::fill(floats_, floats_ + float_count, 0.0f);
    for (int64_t b = 0; b < blocks; ++b) {
      float* f = floats_ + b * kFloatsPerBlock;
      for (int t = 0; t < tokens; ++t) {
        const uint8_t* record = x + size_t(t) * x_stride + size_t(b) * L.activation_block_bytes();
        for (int s = 0; s < L.block / kK; ++s) {
          std::memcpy(a_tile(b, s) + t * kK, record + s * kK, kK);
        }
        std::memcpy(f + t, record + L.dx_at(), sizeof(float));
        if constexpr (!L.signed_quants) {
          for (int g = 0; g < L.block / L.group; ++g) {
            std::memcpy(f + (1 + g) * kTokens + t, record + L.sums_at() + 4 * g, sizeof(float));
          }
        }
      }
    }
  }

  // The A tile of sub-block s of block b: a row of kK bytes per token.
  uint8_t* a_tile(int64_t b, int s) const { return quants_ + (size_t(b) * (L.block / kK) + size_t(s)) * kK * tokens_; }
  const float* floats(int64_t b) const { return floats_ + b * kFloatsPerBlock; }

 private:
  int tokens_;
  alignas(64) uint8_t local_quants_[kLocalBlocks * L.block * kTokens];
  alignas(64) float local_floats_[kLocalBlocks * kFloatsPerBlock];
  std::vector<uint8_t> heap_quants_;
  std::vector<float> heap_floats_;
  uint8_t* quants_ = local_quants_;
  float* floats_ = local_floats_;
};

// Walks a row of tiles' products in order: panel, block, sub-block (kPerBlock to a block), with
// the pointers of each product's operands; counters rather than divisions, which would cost more
// than a tile product's issue.
template <QuantGemmLayout L>
struct ProductCursor {
  static constexpr int kPerBlock = L.block / kK;
  int64_t blocks, panel = 0, block = 0;
  int sub = 0;

  void next() {
    if (++sub < kPerBlock) return;
    sub = 0;
    if (++block < blocks) return;
    block = 0;
    ++panel;
  }
};

// A panel's accumulators: token t's sums over the panel's 16 rows. Passed by value between
// always-inlined functions, so that they stay in registers.
struct Acc {
  GL::F t[kTokens];
};

// Block b's sums (sums[s]: sub-block s's [kTokens][kLanes]) into acc, as the AVX512_VNNI tile
// folds them: the offsets against the tokens' group sums, then the integer sum scaled by d dx.
template <QuantGemmLayout L>
[[gnu::always_inline]] inline Acc fold(Acc acc, const float* dx, const uint8_t* w,
                                       const int32_t (*sums)[kTokens * kLanes]) {
  const GL::F step = GL::load_f(reinterpret_cast<const float*>(w + L.steps_at(kLanes)));
  if constexpr (L.int_scales) {
    constexpr int kSubBlocks = L.block / kK, kGroups = L.block / L.group;
    const auto* scales = reinterpret_cast<const int32_t*>(w + L.scales_at(kLanes));
    const auto* offsets = reinterpret_cast<const float*>(w + L.offsets_at(kLanes));
    GL::I scale[kSubBlocks];
#pragma GCC unroll 8
    for (int s = 0; s < kSubBlocks; ++s) scale[s] = _mm512_srai_epi32(GL::load_i(scales + 2 * s * kLanes), 16);
#pragma GCC unroll 16
    for (int t = 0; t < kTokens; ++t) {
      GL::I sum = GL::izero();
#pragma GCC unroll 8
      for (int s = 0; s < kSubBlocks; ++s) {
        sum = _mm512_add_epi32(sum, _mm512_mullo_epi32(GL::load_i(sums[s] + t * kLanes), scale[s]));
      }
#pragma GCC unroll 16
      for (int g = 0; g < kGroups; ++g) {
        acc.t[t] = GL::fmadd(GL::load_f(offsets + g * kLanes), dx[(1 + g) * kTokens + t], acc.t[t]);
      }
      acc.t[t] = GL::fold(acc.t[t], sum, step, dx[t]);
    }
  } else {
    if constexpr (!L.signed_quants) {
      const GL::F offset = GL::load_f(reinterpret_cast<const float*>(w + L.offsets_at(kLanes)));
#pragma GCC unroll 16
      for (int t = 0; t < kTokens; ++t) acc.t[t] = GL::fmadd(offset, dx[kTokens + t], acc.t[t]);
    }
#pragma GCC unroll 16
    for (int t = 0; t < kTokens; ++t) acc.t[t] = GL::fold(acc.t[t], GL::load_i(sums[0] + t * kLanes), step, dx[t]);
  }
  return acc;
}

// c[t * ldc + j] (+)= the panel's sums, for its `rows` rows and the `tokens` tokens.
[[gnu::always_inline]] inline void store(Acc acc, int rows, int tokens, float* c, int64_t ldc, bool accumulate) {
#pragma GCC unroll 16
  for (int t = 0; t < kTokens; ++t) {
    if (t >= tokens) break;
    float* row = c + t * ldc;
    if (rows == kLanes) {
      GL::store(row, acc.t[t], accumulate);
      continue;
    }
    alignas(64) float lanes[kLanes];
    GL::store(lanes, acc.t[t], false);
    for (int j = 0; j < rows; ++j) row[j] = accumulate ? row[j] + lanes[j] : lanes[j];
  }
}

// A row of tiles as one stream of tile products, kSlots in flight. A block's sums are folded once
// the first product of the next block is stored: the tile stores have reached memory by then.
template <QuantGemmLayout L>
void stream(int64_t n, const uint8_t* panels, size_t panel_stride, int rows, int tokens, const uint8_t* x,
            size_t x_stride, float* c, int64_t ldc, bool accumulate) {
  constexpr int kPerBlock = L.block / kK;
  constexpr size_t kWeightBlock = L.weight_block_bytes(kLanes);
  const int64_t blocks = n / L.block, panel_count = (rows + kLanes - 1) / kLanes;
  const int64_t products = panel_count * blocks * kPerBlock;
  if (products == 0) return;
  const TokenBlocks<L> token_blocks(blocks, tokens, x, x_stride);
  // Two blocks' sums: the one being stored and the one being folded. Rows of the C tiles past
  // `tokens` are not stored: zero, so the folds read defined values.
  alignas(64) int32_t sums[2][kPerBlock][kTokens * kLanes];
  if (tokens < kTokens) std::memset(sums, 0, sizeof sums);
  auto weights = [&](int64_t panel, int64_t block) {
    return panels + size_t(panel) * panel_stride + size_t(block) * kWeightBlock;
  };
  ProductCursor<L> issued{blocks};
  auto issue = [&](int slot) {
    multiply<L.signed_quants>(slot, token_blocks.a_tile(issued.block, issued.sub), kK,
                              weights(issued.panel, issued.block) + size_t(issued.sub) * kK * kLanes);
    issued.next();
  };
  for (int64_t i = 0; i < std::min<int64_t>(kSlots, products); ++i) issue(int(i));

  Acc acc;
  // The block last stored, to fold next: its panel, its index and which sums hold it.
  int64_t pending_panel = -1, pending_block = 0;
  int pending_sums = 0;
#define TG_AMX_FOLD_PENDING()                                                                                          \
  do {                                                                                                                 \
    if (pending_block == 0) acc = Acc{};                                                                               \
    acc = fold<L>(acc, token_blocks.floats(pending_block), weights(pending_panel, pending_block), sums[pending_sums]); \
    if (pending_block == blocks - 1) {                                                                                 \
      const int64_t r0 = pending_panel * kLanes;                                                                       \
      store(acc, int(std::min<int64_t>(kLanes, rows - r0)), tokens, c + r0, ldc, accumulate);                          \
    }                                                                                                                  \
  } while (false)
  ProductCursor<L> stored{blocks};
  int slot = 0, block_sums = 0;
  for (int64_t i = 0; i < products; ++i) {
    const int64_t panel = stored.panel, block = stored.block;
    const int sub = stored.sub;
    store_sums(slot, sums[block_sums][sub]);
    if (i + kSlots < products) issue(slot);
    slot = (slot + 1) % kSlots;
    if (sub == 0) {
      if (pending_panel >= 0) TG_AMX_FOLD_PENDING();
      pending_panel = panel, pending_block = block, pending_sums = block_sums;
    }
    if (sub == kPerBlock - 1) block_sums ^= 1;
    stored.next();
  }
  TG_AMX_FOLD_PENDING();
#undef TG_AMX_FOLD_PENDING
}

void quant_gemm_tiles(QuantGemmLayout layout, int64_t n, const uint8_t* panels, size_t panel_stride, int rows,
                      int tokens, const uint8_t* x, size_t x_stride, float* c, int64_t ldc, bool accumulate) {
  if (layout.int_scales && layout.max_quant > kQuantGemmK.max_quant) {
    // q6_K: the AVX512_VNNI tiles, as many tokens at a time as they take.
    const VecKernels& vnni = avx512_vnni_vec_kernels();
    for (int t0 = 0; t0 < tokens; t0 += vnni.quant_tile_tokens) {
      vnni.quant_gemm_tiles(layout, n, panels, panel_stride, rows, std::min(vnni.quant_tile_tokens, tokens - t0),
                            x + size_t(t0) * x_stride, x_stride, c + t0 * ldc, ldc, accumulate);
    }
    return;
  }
  configure_tiles(tokens);
  // q4_K and q5_K: the layout repeats each 32-element sub-block's scale for both its halves.
  if (layout.int_scales) {
    stream<kQuantGemmK>(n, panels, panel_stride, rows, tokens, x, x_stride, c, ldc, accumulate);
  } else if (layout.signed_quants) {
    stream<kQuantGemm8>(n, panels, panel_stride, rows, tokens, x, x_stride, c, ldc, accumulate);
  } else {
    stream<kQuantGemm32>(n, panels, panel_stride, rows, tokens, x, x_stride, c, ldc, accumulate);
  }
  // The 8 KiB of tile data would otherwise be saved and restored at every context switch.
  _tile_release();
}

}  // namespace amx

const VecKernels& amx_vec_kernels() {
  static const VecKernels kernels = [] {
    // Detecting the features asks Linux for the tile state, without which the first tile
    // instruction raises SIGILL: done here too, for callers that take this table by name.
    (void)cpu_features();
    VecKernels k = avx512_bf16_vec_kernels();
    k.isa = Isa::AMX;
    k.quant_tile_tokens = amx::kTokens;
    k.quant_gemm_tiles = amx::quant_gemm_tiles;
    return k;
  }();
  return kernels;
}

}  // namespace tg::cpu
