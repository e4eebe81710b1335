// K-quant rows against q8_K activations (vec.h: quantize_q8k, dot_q8k_rows), written once
// against V::Q32 (simd.h: 32 quants at a time). Part of vec_impl.h, included inside its ISA
// namespace.
//
// A block's product is exact integers scaled twice: d_w d_x * sum_s sc_s sum_i q_i x_i for the
// quants, plus offset_w d_x * sum_s o_s bsum_s for the part of each weight that does not depend on
// its quant (q4_K/q5_K: -dmin m_s; q6_K: -32 d sc_s), against the activations' 16-element sums.

using Q32 = V::Q32;

void quantize_q8k(int64_t n, BlockQ8_K* y, const float* x) {
  for (int64_t b = 0; b < n / kQKBlockSize; ++b) {
    const float* xb = x + b * kQKBlockSize;
    // |x| and x * 0 (NaN for an inf or NaN) in separate lanes: the maximum is exact, so the
    // order of the lanes does not matter; one NaN makes the sum NaN.
    F amax = V::zero(), poison = V::zero();
    for (int i = 0; i < kQKBlockSize; i += W) {
      const F v = V::load(xb + i);
      amax = V::max(amax, V::abs(v));
      poison = V::add(poison, V::mul(v, V::zero()));
    }
    const float d = V::reduce_max(amax) / 127.0f;
    const bool finite = V::reduce_add(poison) == 0.0f;
    y[b].d = finite ? d : std::numeric_limits<float>::quiet_NaN();
    if (finite && d > 0.0f) {
      for (int i = 0; i < kQKBlockSize; i += 32) Q32::quantize(xb + i, d, y[b].qs + i);
    } else {
      std::memset(y[b].qs, 0, sizeof y[b].qs);
    }
    for (int s = 0; s < kQKBlockSize / 16; ++s) {
      int sum = 0;
      for (int i = 16 * s; i < 16 * s + 16; ++i) sum += y[b].qs[i];
      y[b].bsums[s] = int16_t(sum);
    }
  }
}

// A weight block's integer scales: scale16[g] and offset16[g] for elements 16g .. 16g + 15.
struct IntScalesK {
  alignas(32) int16_t scale16[16];
  int16_t offset16[16];
  float d, offset_d;
};

inline IntScalesK int_scales_affine_k(const uint8_t* scales, f16 d, f16 dmin, const float* f16_table) {
  uint8_t sc_m[16];
  unpack_scales_mins_k(scales, sc_m);
  IntScalesK s;
  Q32::widen_pairs(sc_m, s.scale16);
  Q32::widen_pairs(sc_m + 8, s.offset16);
  s.d = f16_table[d.bits];
  s.offset_d = -f16_table[dmin.bits];
  return s;
}

// The quants of elements 32p .. 32p + 31 (0..15 for q4_K, 0..31 for q5_K, 0..63 for q6_K).
struct IntQ4_K {
  using Block = BlockQ4_K;
  static IntScalesK scales(const Block& b, const float* f16_table) {
    return int_scales_affine_k(b.scales, b.d, b.dmin, f16_table);
  }
  static Q32::B piece(const Block& b, int p) {
    return Q32::bits(Q32::load_u8(b.qs + 32 * (p / 2)), 4 * (p % 2), 0xF);
  }
};

struct IntQ5_K {
  using Block = BlockQ5_K;
  static IntScalesK scales(const Block& b, const float* f16_table) {
    return int_scales_affine_k(b.scales, b.d, b.dmin, f16_table);
  }
  static Q32::B piece(const Block& b, int p) {
    const Q32::B low = Q32::bits(Q32::load_u8(b.qs + 32 * (p / 2)), 4 * (p % 2), 0xF);
    return Q32::or_(low, Q32::shl4(Q32::bits(Q32::load_u8(b.qh), p, 1)));
  }
};

struct IntQ6_K {
  using Block = BlockQ6_K;
  static IntScalesK scales(const Block& b, const float* f16_table) {
    IntScalesK s;
    Q32::widen_i8(b.scales, s.scale16);
    Q32::widen_i8(b.scales, s.offset16);
    s.d = f16_table[b.d.bits];
    s.offset_d = -32.0f * s.d;
    return s;
  }
  static Q32::B piece(const Block& b, int p) {
    const int h = p / 4, g = p % 4;
    const Q32::B low = Q32::bits(Q32::load_u8(b.ql + 64 * h + 32 * (g % 2)), 4 * (g / 2), 0xF);
    return Q32::or_(low, Q32::shl4(Q32::bits(Q32::load_u8(b.qh + 32 * h), 2 * g, 3)));
  }
};

template <class Fn>
inline void with_q8k_decoder(DType type, Fn fn) {
  switch (type) {
    case DType::Q4_K: return fn(IntQ4_K{});
    case DType::Q5_K: return fn(IntQ5_K{});
    case DType::Q6_K: return fn(IntQ6_K{});
    default: break;
  }
  throw_wrong_quant_type(type, "dot_q8k_rows");
}

// R rows x T tokens (for_each_quant_tile): each piece of weights is unpacked once for all the
// tokens. Outputs accumulate in an order that depends only on n, as in dot_quant_tile.
template <class D, int R, int T>
inline void dot_q8k_tile(int64_t blocks, const char* first_row, int64_t row_step, size_t stride,
                         const BlockQ8_K* x, int64_t x_stride, float* out, int64_t out_stride,
                         const float* f16_table) {
  using Block = typename D::Block;
  const Block* row[R];
  for (int r = 0; r < R; ++r)
    row[r] = reinterpret_cast<const Block*>(first_row + r * row_step * int64_t(stride));
  Q32::FAcc acc[R][T];
  for (int r = 0; r < R; ++r) {
    for (int t = 0; t < T; ++t) acc[r][t] = Q32::fzero();
  }
  for (int64_t b = 0; b < blocks; ++b) {
    IntScalesK s[R];
    Q32::Scales scales[R];
    for (int r = 0; r < R; ++r) {
      s[r] = D::scales(row[r][b], f16_table);
      scales[r] = Q32::scales(s[r].scale16);
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
        for (int t = 0; t < T; ++t) sum[r][t] = Q32::dot_add(sum[r][t], q, xq[t], scales[r], p);
      }
    }
    for (int r = 0; r < R; ++r) {
      for (int t = 0; t < T; ++t) {
        acc[r][t] = Q32::fmadd(sum[r][t], s[r].d * xb[t]->d, acc[r][t]);
        acc[r][t] = Q32::fmadd(Q32::dot_i16(s[r].offset16, xb[t]->bsums), s[r].offset_d * xb[t]->d,
                               acc[r][t]);
      }
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int t = 0; t < T; ++t) out[t * out_stride + r * row_step] = Q32::reduce(acc[r][t]);
  }
}

// Tiles of 2 rows x 1 token or 1 row x 2 tokens: measured on Zen 4 at d_model 2048, q4_K decode
// was ~3% faster than with 4 rows and ~10% faster than with 8 (fewer streams of weights at once).
constexpr int kQ8kAccumulators = 2;
constexpr int kQ8kTileTokens = 2;

void dot_q8k_rows(DType type, int64_t n, int64_t count, const void* rows, size_t stride,
                  int64_t tokens, const BlockQ8_K* x, int64_t x_stride, float* out,
                  int64_t out_stride) {
  with_q8k_decoder(type, [&]<class D>(D) {
    const float* f16_table = f16_to_f32_table();
    for_each_quant_tile<kQ8kAccumulators, kQ8kTileTokens>(
        count, rows, stride, tokens, x, x_stride, out, out_stride,
        [&]<int R, int T>(const char* first_row, int64_t row_step, const BlockQ8_K* xt, float* ot) {
          dot_q8k_tile<D, R, T>(n / kQKBlockSize, first_row, row_step, stride, xt, x_stride, ot,
                                out_stride, f16_table);
        });
  });
}
