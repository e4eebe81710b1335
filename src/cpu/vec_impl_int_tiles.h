// What the dequantizers of vec_impl.h and the integer dot products of vec_impl_int_dot.h share:
// the 32-element blocks' steps and offsets, and the walk of a matrix's rows in tiles. Not a
// normal header: included inside an ISA namespace by vec_impl.h, and by vec_avx512_vnni.cpp,
// which compiles the dot products again with AVX512-VNNI's traits.

inline uint32_t load_u32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// A 32-element block's step and the value of its quant 0 (the part of each weight that its quant
// does not change): q4_0 and q5_0 are centred, d (q - 8) and d (q - 16); q4_1 and q5_1 affine,
// d q + m.
inline float block_step(const BlockQ4_0& b, const float* f16) { return f16[b.d.bits]; }
inline float block_offset(const BlockQ4_0& b, const float* f16) { return -8.0f * f16[b.d.bits]; }
inline float block_step(const BlockQ4_1& b, const float* f16) { return f16[b.d.bits]; }
inline float block_offset(const BlockQ4_1& b, const float* f16) { return f16[b.m.bits]; }
inline float block_step(const BlockQ5_0& b, const float* f16) { return f16[b.d.bits]; }
inline float block_offset(const BlockQ5_0& b, const float* f16) { return -16.0f * f16[b.d.bits]; }
inline float block_step(const BlockQ5_1& b, const float* f16) { return f16[b.d.bits]; }
inline float block_offset(const BlockQ5_1& b, const float* f16) { return f16[b.m.bits]; }

// Calls fn.template operator()<N>() with N = min(count, kMax), for count >= 1.
template <int kMax, class Fn>
inline void with_tile_size(int64_t count, Fn fn) {
  if constexpr (kMax > 1) {
    if (count < kMax) return with_tile_size<kMax - 1>(count, fn);
  }
  fn.template operator()<kMax>();
}

template <int kAccumulators, int T>
constexpr int quant_tile_rows() {
  return kAccumulators / T < 8 ? kAccumulators / T : 8;
}

// Walks `count` rows (`stride` bytes apart) times `tokens` activation rows in tiles of R rows x
// T tokens, T up to kTokens and R up to row_streams (1 or more):
// tile.template operator()<R, T>(first_row, row_step, first_token, out) computes rows first_row +
// r * row_step into out[t * out_stride + r * row_step] for tokens first_token + t.
template <int kAccumulators, int kTokens, class Tile>
inline void for_each_quant_tile(int row_streams, int64_t count, const void* rows, size_t stride, int64_t tokens,
                                float* out, int64_t out_stride, Tile tile) {
  // Panels of rows small enough to stay in L2 while each further group of tokens reads them again.
  constexpr int64_t kPanelBytes = 256 << 10;
  // (A stride of 0, every row aliasing one, is a valid view: one panel then.)
  const int64_t fit = stride ? int64_t(kPanelBytes / stride) : count;
  const int64_t panel_rows = fit > 8 ? fit : 8;
  for (int64_t p = 0; p < count; p += panel_rows) {
    const char* panel = static_cast<const char*>(rows) + p * int64_t(stride);
    const int64_t panel_count = count - p < panel_rows ? count - p : panel_rows;
    for (int64_t t0 = 0; t0 < tokens; t0 += kTokens) {
      float* ot = out + t0 * out_stride + p;
      with_tile_size<kTokens>(tokens - t0, [&]<int T>() {
        // (Fewer rows than the accumulators allow instantiate no new tiles: the last rows of a
        // panel take every smaller size anyway.)
        constexpr int kRows = quant_tile_rows<kAccumulators, T>();
        with_tile_size<kRows>(row_streams < kRows ? row_streams : kRows, [&]<int R>() {
          // A tile's rows come from R equal runs of the panel, so each row streams from memory
          // on its own: the prefetcher follows one stream per 4 KiB page, not several
          // interleaved (R adjacent rows read half as fast, on Zen 4).
          const int64_t run = panel_count / R;
          for (int64_t i = 0; i < run; ++i) {
            tile.template operator()<R, T>(panel + i * int64_t(stride), run, t0, ot + i);
          }
          if (const int64_t rest = panel_count - run * R; rest > 0) {
            with_tile_size<R>(rest, [&]<int kRest>() {
              tile.template operator()<kRest, T>(panel + run * R * int64_t(stride), 1, t0, ot + run * R);
            });
          }
        });
      });
    }
  }
}

// A tile's R rows of blocks: rows first_row + r * row_step, `stride` bytes apart.
template <class Block, int R>
inline void tile_rows(const char* first_row, int64_t row_step, size_t stride, const Block* (&row)[R]) {
  for (int r = 0; r < R; ++r) {
    row[r] = reinterpret_cast<const Block*>(first_row + r * row_step * int64_t(stride));
  }
}
