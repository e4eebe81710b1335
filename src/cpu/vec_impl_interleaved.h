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
  const size_t block_bytes = interleaved_block_bytes(type);
  auto* sums = static_cast<int32_t*>(scratch);
  if (type == DType::Q4_K) {
    // The token's sub-block sums in pairs (R16::fold_q4_K), once per call.
    const auto* xk = static_cast<const BlockQ8_K*>(x);
    const int64_t blocks = n / kQKBlockSize;
    for (int64_t b = 0; b < blocks; ++b) {
      for (int p = 0; p < 4; ++p) {
        const int16_t* s = xk[b].bsums + 4 * p;
        sums[4 * b + p] = int32_t(uint32_t(uint16_t(s[0] + s[1])) | uint32_t(uint16_t(s[2] + s[3])) << 16);
      }
    }
    return dot_interleaved_groups(
        blocks, block_bytes, rows, groups,
        out, [&](const uint8_t* p, int64_t b, FAcc acc) __attribute__((always_inline)) {
          return R::fold_q4_K(p, xk[b].qs, sums + 4 * b, xk[b].d, acc);
        });
  }
  // q4_0 and q8_0: the token's blocks' sums of quants, which the unsigned products take back.
  const auto* x32 = static_cast<const BlockQ8_32*>(x);
  const int64_t blocks = n / kQ8_32BlockSize;
  for (int64_t b = 0; b < blocks; ++b) sums[b] = sum_of(x32[b].qs, kQ8_32BlockSize);
  constexpr size_t kSteps = kInterleavedRows * sizeof(uint16_t);
  const auto fold32 = [&](auto sum_block) {
    dot_interleaved_groups(
        blocks, block_bytes, rows, groups,
        out, [&](const uint8_t* p, int64_t b, FAcc acc) __attribute__((always_inline)) {
          return R::fmadd_steps(sum_block(p + kSteps, x32[b].qs, sums[b]), reinterpret_cast<const uint16_t*>(p),
                                x32[b].d, acc);
        });
  };
  switch (type) {
    case DType::Q4_0:
      return fold32([](const uint8_t* q, const int8_t* xq, int32_t s)
                        __attribute__((always_inline)) { return R::sum_q4_0(q, xq, s); });
    case DType::Q8_0:
      return fold32([](const uint8_t* q, const int8_t* xq, int32_t s)
                        __attribute__((always_inline)) { return R::sum_q8_0(q, xq, s); });
    default: break;
  }
  throw_wrong_quant_type(type, "dot_interleaved_rows");
}
