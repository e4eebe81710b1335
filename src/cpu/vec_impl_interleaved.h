// interleaved_rows.h's groups of 16 weight rows against one token of 8-bit activations (vec.h:
// dot_interleaved_rows), written once against V::R16 (simd.h: one lane per row). Part of
// vec_impl.h, after vec_impl_int_dot.h, inside its ISA namespace.

// Each block of one group of rows into acc: fold(block's bytes, block index, acc).
template <class Fold>
inline void dot_interleaved_groups(int64_t blocks, size_t block_bytes, int64_t rows, const uint8_t* groups, float* out,
                                   Fold fold) {
  using R = V::R16;
  // One sequential stream, which the hardware prefetchers follow: on one Zen 4 core, from DRAM,
  // requesting each block's lines 2, 4 or 8 KiB ahead as well made q4_0 and q8_0 ~5-10% slower.
  const uint8_t* p = groups;
  for (int64_t first = 0; first < rows; first += kInterleavedRows) {
    typename R::F acc = R::fzero();
    for (int64_t b = 0; b < blocks; ++b, p += block_bytes) acc = fold(p, b, acc);
    R::store(out + first, acc, int(std::min<int64_t>(kInterleavedRows, rows - first)));
  }
}

void dot_interleaved_rows(DType type, int64_t n, int64_t rows, const uint8_t* groups, const void* x, float* out,
                          void* scratch) {
  using R = V::R16;
  using FAcc = typename R::F;
  if (!interleaves(type)) throw_wrong_quant_type(type, "dot_interleaved_rows");
  const size_t block_bytes = interleaved_block_bytes(type);
  auto* sums = static_cast<int32_t*>(scratch);
  if (type == DType::Q4_K || type == DType::Q5_K || type == DType::Q6_K) {
    // The token's sums of its sub-blocks' quants in int16 pairs, once per call: q4_K's and q5_K's
    // 8 of 32 elements (R16::fold_affine_k), q6_K's 16 of 16 (fold_q6_K).
    const auto* xk = static_cast<const BlockQ8_K*>(x);
    const int64_t blocks = n / kQKBlockSize;
    const int per_block = type == DType::Q6_K ? 8 : 4;
    const auto pair = [](int a, int b) { return int32_t(uint32_t(uint16_t(a)) | uint32_t(uint16_t(b)) << 16); };
    for (int64_t b = 0; b < blocks; ++b) {
      const int16_t* s = xk[b].bsums;
      for (int p = 0; p < per_block; ++p) {
        sums[per_block * b + p] = type == DType::Q6_K ? pair(s[2 * p], s[2 * p + 1])
                                                      : pair(s[4 * p] + s[4 * p + 1], s[4 * p + 2] + s[4 * p + 3]);
      }
    }
    const auto fold = [&](auto fold_block) {
      dot_interleaved_groups(
          blocks, block_bytes, rows, groups,
          out, [&](const uint8_t* p, int64_t b, FAcc acc) __attribute__((always_inline)) {
            return fold_block(p, xk[b].qs, sums + per_block * b, xk[b].d, acc);
          });
    };
    if (type == DType::Q4_K) {
      return fold([](const uint8_t* p, const int8_t* xq, const int32_t* s, float d, FAcc acc)
                      __attribute__((always_inline)) { return R::template fold_affine_k<false>(p, xq, s, d, acc); });
    }
    if (type == DType::Q5_K) {
      return fold([](const uint8_t* p, const int8_t* xq, const int32_t* s, float d, FAcc acc)
                      __attribute__((always_inline)) { return R::template fold_affine_k<true>(p, xq, s, d, acc); });
    }
    return fold([](const uint8_t* p, const int8_t* xq, const int32_t* s, float d, FAcc acc)
                    __attribute__((always_inline)) { return R::fold_q6_K(p, xq, s, d, acc); });
  }
  // The 32-element types: the token's blocks' sums of quants, which the unsigned products take back.
  const auto* x32 = static_cast<const BlockQ8_32*>(x);
  const int64_t blocks = n / kQ8_32BlockSize;
  for (int64_t b = 0; b < blocks; ++b) sums[b] = sum_of(x32[b].qs, kQ8_32BlockSize);
  const auto fold32 = [&](auto sum_block, size_t m_at) {
    dot_interleaved_groups(
        blocks, block_bytes, rows, groups,
        out, [&](const uint8_t* p, int64_t b, FAcc acc) __attribute__((always_inline)) {
          acc = R::fmadd_steps(sum_block(p, x32[b].qs, sums[b]), reinterpret_cast<const uint16_t*>(p), x32[b].d, acc);
          if (m_at == 0) return acc;
          return R::fmadd_offsets(reinterpret_cast<const uint16_t*>(p + m_at), x32[b].s, acc);
        });
  };
  const auto nibbles = [&]<bool kFifth>(const Interleaved32 l) {
    fold32(
        [l](const uint8_t* p, const int8_t* xq, int32_t s) __attribute__((always_inline)) {
          return R::template sum_nibbles<kFifth>(p + l.nibbles, p + l.fifth, xq, l.centre * s);
        },
        l.m);
  };
  switch (type) {
    case DType::Q4_0:
    case DType::Q4_1: return nibbles.template operator()<false>(interleaved32(type));
    case DType::Q5_0:
    case DType::Q5_1: return nibbles.template operator()<true>(interleaved32(type));
    case DType::Q8_0:
      return fold32(
          [](const uint8_t* p, const int8_t* xq, int32_t s)
              __attribute__((always_inline)) { return R::sum_q8_0(p + kInterleavedStepsBytes, xq, s); },
          0);
    default: break;  // (refused above)
  }
}
