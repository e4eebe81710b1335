// Quantized rows against 8-bit activations (quant.h, activation_type; vec.h: quantize_q8k,
// quantize_q8_32, dot_q8k_rows, dot_q8_32_rows), written once against V::Q32 (simd.h: 32 quants
// at a time). Part of vec_impl.h, included inside its ISA namespace.
//
// A block's product is exact integers scaled in f32: d_w d_x * sum_i q_i x_i (with the K types'
// sub-block scales inside the sum) for the quants, plus the part of each weight that does not
// depend on its quant against the activations' sums: q4_1 and q5_1 m * s_x; the K types
// offset_d_w d_x * sum_s o_s bsum_s (q4_K/q5_K: -dmin, m_s; q6_K: -32d, sc_s). q4_0 and q5_0 are
// centred, d (q - 8) and d (q - 16): the centre times the activations' quants is taken off the
// integer sum. q8_0's quants are signed and need nothing.

using Q32 = V::Q32;

// Quantizes `count` values (a multiple of 32) to q by quant.h's rule; returns d.
inline float quantize_block_q8(const float* x, int count, int8_t* q) {
  // |x| and x * 0 (NaN for an inf or NaN) in separate lanes: the maximum is exact, so the order
  // of the lanes does not matter; one NaN makes the sum NaN.
  F amax = V::zero(), poison = V::zero();
  for (int i = 0; i < count; i += W) {
    const F v = V::load(x + i);
    amax = V::max(amax, V::abs(v));
    poison = V::add(poison, V::mul(v, V::zero()));
  }
  const float d = V::reduce_max(amax) / 127.0f;
  const bool finite = V::reduce_add(poison) == 0.0f;
  if (finite && d > 0.0f) {
    for (int i = 0; i < count; i += 32) Q32::quantize(x + i, d, q + i);
  } else {
    std::memset(q, 0, size_t(count));
  }
  return finite ? d : std::numeric_limits<float>::quiet_NaN();
}

inline int sum_of(const int8_t* q, int count) {
  int sum = 0;
  for (int i = 0; i < count; ++i) sum += q[i];
  return sum;
}

void quantize_q8k(int64_t n, BlockQ8_K* y, const float* x) {
  for (int64_t b = 0; b < n / kQKBlockSize; ++b) {
    y[b].d = quantize_block_q8(x + b * kQKBlockSize, kQKBlockSize, y[b].qs);
    for (int s = 0; s < kQKBlockSize / 16; ++s) y[b].bsums[s] = int16_t(sum_of(y[b].qs + 16 * s, 16));
  }
}

void quantize_q8_32(int64_t n, BlockQ8_32* y, const float* x) {
  for (int64_t b = 0; b < n / kQ8_32BlockSize; ++b) {
    const float d = quantize_block_q8(x + b * kQ8_32BlockSize, kQ8_32BlockSize, y[b].qs);
    y[b].d = tg::q8_32_step(d);
    y[b].s = tg::q8_32_sum(d, sum_of(y[b].qs, kQ8_32BlockSize));
  }
}

// A weight block's integer scales, for elements 16g .. 16g + 15 scale g and offset g.
struct IntScalesK {
  Q32::Scales scales;
  Q32::I16x16 offset16;
  float d, offset_d;
};

// The quants of elements 32p .. 32p + 31 (0..15 for q4_K, 0..31 for q5_K, 0..63 for q6_K), as
// DecodeAffineK and DecodeQ6_K read them.
template <class B, bool kHighBit>
struct IntAffineK {
  using Block = B;
  static_assert(offsetof(Block, scales) + 16 <= sizeof(Block), "scales_mins_k reads 16 bytes");
  static IntScalesK scales(const Block& b, const float* f16_table) {
    const Q32::ScalesMinsK sm = Q32::scales_mins_k(b.scales);
    return {sm.scales, sm.mins, f16_table[b.d.bits], -f16_table[b.dmin.bits]};
  }
  static Q32::B piece(const Block& b, int p) {
    const Q32::B low = Q32::bits(Q32::load_u8(b.qs + 32 * (p / 2)), 4 * (p % 2), 0xF);
    if constexpr (kHighBit) return Q32::or_(low, Q32::bits_to(Q32::load_u8(b.qh), p, 1, 4));
    return low;
  }
};

struct IntQ6_K {
  using Block = BlockQ6_K;
  static IntScalesK scales(const Block& b, const float* f16_table) {
    const Q32::I16x16 scale16 = Q32::widen_i8(b.scales);
    const float d = f16_table[b.d.bits];
    return {Q32::scales(scale16), scale16, d, -32.0f * d};
  }
  static Q32::B piece(const Block& b, int p) {
    const int h = p / 4, g = p % 4;
    const Q32::B low = Q32::bits(Q32::load_u8(b.ql + 64 * h + 32 * (g % 2)), 4 * (g / 2), 0xF);
    return Q32::or_(low, Q32::bits_to(Q32::load_u8(b.qh + 32 * h), 2 * g, 2, 4));
  }
};

template <class Fn>
inline void with_q8k_decoder(DType type, Fn fn) {
  switch (type) {
    case DType::Q4_K: return fn(IntAffineK<BlockQ4_K, false>{});
    case DType::Q5_K: return fn(IntAffineK<BlockQ5_K, true>{});
    case DType::Q6_K: return fn(IntQ6_K{});
    default: break;
  }
  throw_wrong_quant_type(type, "dot_q8k_rows");
}

// The quants of a 32-element type (unsigned: q4 0..15, q5 0..31), as DecodeBlock32 reads them, of
// one row (the GEMM's panels) or of two at once (Q32::RowPair); its step is block_step, and its
// offset the centre kCentre (q4_0 8, q5_0 16) times the step, or block_offset (q4_1, q5_1: m) when
// kCentre is 0.
template <class B, bool kHighBit, int kCentreQuant>
struct IntBlock32 {
  using Block = B;
  static constexpr bool kSigned = false;
  static constexpr int kCentre = kCentreQuant;
  static Q32::B quants(const Block& b) {
    const Q32::B low = Q32::nibbles16(b.qs);
    if constexpr (kHighBit) return Q32::or_(low, Q32::bits32(load_u32(b.qh), 16));
    return low;
  }
  static Q32::RowPair quants(const Block& a, const Block& b) {
    const Q32::RowPair low = Q32::nibbles16_pair(a.qs, b.qs);
    if constexpr (kHighBit) return Q32::or_bits32_pair(low, load_u32(a.qh), load_u32(b.qh), 16);
    return low;
  }
};

// q8_0's quants as they are: signed, -128..127, step d and no offset.
struct IntQ8_0 {
  using Block = BlockQ8_0;
  static constexpr bool kSigned = true;
  static constexpr int kCentre = 0;
  static Q32::B quants(const Block& b) { return Q32::load_i8(b.qs); }
};
inline float block_step(const BlockQ8_0& b, const float* f16) { return f16[b.d.bits]; }

template <class Fn>
inline void with_q8_32_decoder(DType type, Fn fn) {
  switch (type) {
    case DType::Q8_0: return fn(IntQ8_0{});
    case DType::Q4_0: return fn(IntBlock32<BlockQ4_0, false, 8>{});
    case DType::Q4_1: return fn(IntBlock32<BlockQ4_1, false, 0>{});
    case DType::Q5_0: return fn(IntBlock32<BlockQ5_0, true, 16>{});
    case DType::Q5_1: return fn(IntBlock32<BlockQ5_1, true, 0>{});
    default: break;
  }
  throw_wrong_quant_type(type, "dot_q8_32_rows");
}

// Requests the lines `kPrefetchBytes` ahead of a row's block into L1 (one per 64 bytes of the
// block, so consecutive blocks cover every line). The hardware prefetchers alone left the kernels
// at ~10-11 GB/s from DRAM on one Sapphire Rapids core, ~13-14 with this (2 and 4 KiB ahead did
// the same, 512 bytes less; prefetching to L2 or non-temporally did no better).
constexpr int64_t kPrefetchBytes = 2048;
template <class Block>
inline void prefetch_ahead(const Block* b) {
  const char* p = reinterpret_cast<const char*>(b) + kPrefetchBytes;
  for (size_t o = 0; o < sizeof(Block); o += 64) __builtin_prefetch(p + o);
}

// R rows x T tokens of q8_0 (for_each_quant_tile), as dot_q8k_tile.
template <int R, int T>
inline void dot_q8_0_tile(int64_t blocks, const char* first_row, int64_t row_step, size_t stride, const BlockQ8_32* x,
                          int64_t x_stride, float* out, int64_t out_stride, const float* f16_table) {
  const BlockQ8_0* row[R];
  tile_rows(first_row, row_step, stride, row);
  Q32::FAcc acc[R][T];
  for (int r = 0; r < R; ++r) {
    for (int t = 0; t < T; ++t) acc[r][t] = Q32::fzero();
  }
  for (int64_t b = 0; b < blocks; ++b) {
    const BlockQ8_32* xb[T];
    Q32::B xq[T];
    for (int t = 0; t < T; ++t) {
      xb[t] = x + t * x_stride + b;
      xq[t] = Q32::load_i8(xb[t]->qs);
    }
    for (int r = 0; r < R; ++r) {
      prefetch_ahead(&row[r][b]);
      const Q32::B q = IntQ8_0::quants(row[r][b]);
      const float d = block_step(row[r][b], f16_table);
      for (int t = 0; t < T; ++t) acc[r][t] = Q32::fmadd(Q32::dot_signed(q, xq[t]), d * xb[t]->d, acc[r][t]);
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int t = 0; t < T; ++t) out[t * out_stride + r * row_step] = Q32::reduce(acc[r][t]);
  }
}

// Q32, as a type that depends on D: a branch on Q32's optional members is then only compiled for
// the traits that have them.
template <class D>
struct QuantsFor {
  using type = Q32;
};

// q4_0's and q5_0's centre times each token's quants (Q32::pair_centre), laid out once per call in
// dot_q8_32_rows' scratch rather than again in every tile: two rows per tile (AMD) left nothing to
// share that work with. With the two blocks per step of dot_block32_tile, from L2 on one Zen 4
// core, q4_0 ran 1.14-1.25x and q5_0 1.21-1.25x as fast as before both, with the same bits. It
// is 16 bytes a block: laying out the quants broadcast to both rows' lanes as well (96 bytes) was
// ~3-7% faster for rows of 2048, but for rows of 5632 (a feed-forward down matrix) that layout no
// longer stayed in L1 beside the activations and the streamed rows, and from DRAM the kernel ran
// at 0.55-0.64x.
static_assert(sizeof(Q32::PairCentre) <= kDotQ8_32ScratchBytesPerBlock);

template <class D>
inline void lay_out_centres(int64_t blocks, int64_t tokens, const BlockQ8_32* x, int64_t x_stride,
                            Q32::PairCentre* out) {
  for (int64_t t = 0; t < tokens; ++t) {
    for (int64_t b = 0; b < blocks; ++b) {
      out[t * blocks + b] = Q32::pair_centre(Q32::x_pair(x[t * x_stride + b].qs), D::kCentre);
    }
  }
}

// R rows x T tokens of q4_0, q4_1, q5_0 or q5_1 (for_each_quant_tile), two rows at a time
// (Q32::RowPair); for q4_0 and q5_0 against the tokens' centres too (lay_out_centres, `blocks`
// per token). An odd last row is paired with itself, so a row is summed the same way wherever it
// falls in a tile. q4_1's and q5_1's offsets are summed apart, in block order, and added at the
// end.
template <class D, int R, int T>
inline void dot_block32_tile(int64_t blocks, const char* first_row, int64_t row_step, size_t stride,
                             const BlockQ8_32* x, int64_t x_stride, const Q32::PairCentre* centres, float* out,
                             int64_t out_stride, const float* f16_table) {
  using Block = typename D::Block;
  constexpr int P = (R + 1) / 2;
  const Block* row[R];
  tile_rows(first_row, row_step, stride, row);
  using Q = typename QuantsFor<D>::type;
  constexpr bool kF16Steps = Q::kF16Steps;  // d (and m) of both rows' blocks by Q::pair_steps
  Q32::PairFAcc acc[P][T], pair_offsets[P][T];
  float offsets[R][T];
  for (int t = 0; t < T; ++t) {
    for (int p = 0; p < P; ++p) acc[p][t] = pair_offsets[p][t] = Q32::pair_fzero();
    for (int r = 0; r < R; ++r) offsets[r][t] = 0.0f;
  }
  // Block b's products; `prefetch`: request the rows' lines ahead (prefetch_ahead). Blocks go two
  // at a time, requesting once per two: two of these blocks span less than a cache line, so every
  // line is still requested, with half the prefetches. From L2 on one Zen 4 core, two rows per
  // tile, that made q4_0 ~8% and q5_0 ~12% faster (q4_1, q5_1 3-4%), with no change from DRAM.
  static_assert(2 * sizeof(Block) <= 64);
  const auto add_block = [&](int64_t b, bool prefetch) __attribute__((always_inline)) {
    const BlockQ8_32* xb[T];
    Q32::XPair xq[T];
    const Q32::PairCentre* centre[T];
    for (int t = 0; t < T; ++t) {
      xb[t] = x + t * x_stride + b;
      xq[t] = Q32::x_pair(xb[t]->qs);
      centre[t] = &centres[t * blocks + b];
    }
    for (int p = 0; p < P; ++p) {
      const Block& wa = row[2 * p][b];
      const Block& wb = row[2 * p + 1 < R ? 2 * p + 1 : 2 * p][b];
      if (prefetch) {
        prefetch_ahead(&wa);
        if (2 * p + 1 < R) prefetch_ahead(&wb);
      }
      const Q32::RowPair q = D::quants(wa, wb);
      if constexpr (kF16Steps) {
        const typename Q::PairSteps steps = Q::pair_steps(&wa, &wb);
        for (int t = 0; t < T; ++t) {
          if constexpr (D::kCentre != 0) {
            acc[p][t] =
                Q::pair_fmadd_steps(Q::dot_pair_add(Q::centre_acc(*centre[t]), q, xq[t]), steps.d, xb[t]->d, acc[p][t]);
          } else {
            acc[p][t] = Q::pair_fmadd_steps(Q::dot_pair(q, xq[t]), steps.d, xb[t]->d, acc[p][t]);
            pair_offsets[p][t] = Q::pair_fmadd_offsets(steps.m, xb[t]->s, pair_offsets[p][t]);
          }
        }
        continue;
      }
      const float* da = &f16_table[wa.d.bits];
      const float* db = &f16_table[wb.d.bits];
      for (int t = 0; t < T; ++t) {
        Q32::PairAcc sum;
        if constexpr (D::kCentre != 0) {
          sum = Q32::dot_pair_add(Q32::centre_acc(*centre[t]), q, xq[t]);
        } else {
          sum = Q32::dot_pair(q, xq[t]);
        }
        acc[p][t] = Q32::pair_fmadd(sum, da, db, xb[t]->d, acc[p][t]);
      }
      if constexpr (D::kCentre == 0) {
        for (int t = 0; t < T; ++t) {
          offsets[2 * p][t] = __builtin_fmaf(block_offset(wa, f16_table), xb[t]->s, offsets[2 * p][t]);
          if (2 * p + 1 < R) {
            offsets[2 * p + 1][t] = __builtin_fmaf(block_offset(wb, f16_table), xb[t]->s, offsets[2 * p + 1][t]);
          }
        }
      }
    }
  };
  int64_t b = 0;
  for (; b + 1 < blocks; b += 2) {
    add_block(b, true);
    add_block(b + 1, false);
  }
  if (b < blocks) add_block(b, true);
  for (int p = 0; p < P; ++p) {
    for (int t = 0; t < T; ++t) {
      float sum[2];
      Q32::pair_reduce(acc[p][t], &sum[0], &sum[1]);
      if constexpr (kF16Steps && D::kCentre == 0) {
        Q::pair_lanes(pair_offsets[p][t], &offsets[2 * p][t], &offsets[2 * p + 1 < R ? 2 * p + 1 : 2 * p][t]);
      }
      for (int r = 2 * p; r < 2 * p + 2 && r < R; ++r) {
        out[t * out_stride + r * row_step] = D::kCentre != 0 ? sum[r - 2 * p] : sum[r - 2 * p] + offsets[r][t];
      }
    }
  }
}

// R rows x T tokens of a K type (for_each_quant_tile): each piece of weights is unpacked once for
// all the tokens. Outputs accumulate in an order that depends only on n.
template <class D, int R, int T>
inline void dot_q8k_tile(int64_t blocks, const char* first_row, int64_t row_step, size_t stride, const BlockQ8_K* x,
                         int64_t x_stride, float* out, int64_t out_stride, const float* f16_table) {
  using Block = typename D::Block;
  const Block* row[R];
  tile_rows(first_row, row_step, stride, row);
  Q32::FAcc acc[R][T];
  for (int r = 0; r < R; ++r) {
    for (int t = 0; t < T; ++t) acc[r][t] = Q32::fzero();
  }
  for (int64_t b = 0; b < blocks; ++b) {
    IntScalesK s[R];
    for (int r = 0; r < R; ++r) {
      prefetch_ahead(&row[r][b]);
      s[r] = D::scales(row[r][b], f16_table);
    }
    const BlockQ8_K* xb[T];
    for (int t = 0; t < T; ++t) xb[t] = x + t * x_stride + b;
    Q32::Acc sum[R][T];
    for (int r = 0; r < R; ++r) {
      for (int t = 0; t < T; ++t) sum[r][t] = Q32::zero();
    }
#pragma GCC unroll 8
    for (int p = 0; p < kQKBlockSize / 32; ++p) {
      Q32::B xq[T];
      for (int t = 0; t < T; ++t) xq[t] = Q32::load_i8(xb[t]->qs + 32 * p);
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        const Q32::B q = D::piece(row[r][b], p);
        for (int t = 0; t < T; ++t) sum[r][t] = Q32::dot_add(sum[r][t], q, xq[t], s[r].scales, p);
      }
    }
    for (int r = 0; r < R; ++r) {
      for (int t = 0; t < T; ++t) {
        acc[r][t] = Q32::fmadd(sum[r][t], s[r].d * xb[t]->d, acc[r][t]);
        acc[r][t] = Q32::fmadd(Q32::dot_i16(s[r].offset16, xb[t]->bsums), s[r].offset_d * xb[t]->d, acc[r][t]);
      }
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int t = 0; t < T; ++t) out[t * out_stride + r * row_step] = Q32::reduce(acc[r][t]);
  }
}

// Tiles of up to 4 rows x 1 token or 2 rows x 2 tokens, each row a stream of its own that the
// tile prefetches (prefetch_ahead); matvec_row_streams() (vec.cpp) picks the rows per CPU.
// q4_0..q5_1 tiles take as many rows, as pairs (Q32::RowPair): 8 rows were no faster than 4.
constexpr int kIntDotAccumulators = kMaxMatVecRowStreams;
constexpr int kIntDotTileTokens = 2;

void dot_q8k_rows(DType type, int64_t n, int64_t count, const void* rows, size_t stride, int64_t tokens,
                  const BlockQ8_K* x, int64_t x_stride, float* out, int64_t out_stride, int row_streams) {
  with_q8k_decoder(type, [&]<class D>(D) {
    const float* f16_table = f16_to_f32_table();
    for_each_quant_tile<kIntDotAccumulators, kIntDotTileTokens>(
        row_streams, count, rows, stride, tokens, out, out_stride,
        [&]<int R, int T>(const char* first_row, int64_t row_step, int64_t first_token, float* ot) {
          dot_q8k_tile<D, R, T>(n / kQKBlockSize, first_row, row_step, stride, x + first_token * x_stride, x_stride, ot,
                                out_stride, f16_table);
        });
  });
}

void dot_q8_32_rows(DType type, int64_t n, int64_t count, const void* rows, size_t stride, int64_t tokens,
                    const BlockQ8_32* x, int64_t x_stride, float* out, int64_t out_stride, int row_streams,
                    void* scratch) {
  with_q8_32_decoder(type, [&]<class D>(D) {
    const float* f16_table = f16_to_f32_table();
    const int64_t blocks = n / kQ8_32BlockSize;
    auto* centres = static_cast<Q32::PairCentre*>(scratch);
    if constexpr (D::kCentre != 0) lay_out_centres<D>(blocks, tokens, x, x_stride, centres);
    const auto tile = [&]<int R, int T>(const char* first_row, int64_t row_step, int64_t first_token, float* ot) {
      const BlockQ8_32* xt = x + first_token * x_stride;
      if constexpr (D::kSigned) {
        dot_q8_0_tile<R, T>(blocks, first_row, row_step, stride, xt, x_stride, ot, out_stride, f16_table);
      } else {
        dot_block32_tile<D, R, T>(blocks, first_row, row_step, stride, xt, x_stride, centres + first_token * blocks, ot,
                                  out_stride, f16_table);
      }
    };
    for_each_quant_tile<kIntDotAccumulators, kIntDotTileTokens>(row_streams, count, rows, stride, tokens, out,
                                                                out_stride, tile);
  });
}
