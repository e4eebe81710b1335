// The micro-tile of the integer GEMM of quantized weights (vec.h: quant_gemm_tiles), written
// once against GL (simd.h: GemmLanes*, one weight row per lane). Not a normal header: included
// inside an ISA namespace after `using GL = ...;`, by vec_impl_int_gemm.h for each vec_impl.h
// table and by vec_avx512_vnni.cpp, whose table differs from the AVX-512 one only here.
//
// Where the matrix-vector kernels sum a row's products across the lanes of a register, the GEMM
// keeps one weight row per lane and broadcasts 4 activations of a token at a time, so a tile of
// kLanes rows x kTileTokens tokens needs no reduction. Per block it sums the quants exactly (the
// K types' int16 scales inside), folds the sum into f32 once with d dx, and adds the offsets
// against the activations' group sums. q8_0's signed quants are multiplied with their sign moved
// onto the activations (split_sign), or, by dpbusd, as q + 128 with 128 times the activations'
// sum taken back.

static_assert(GL::kTileTokens <= kMaxQuantTileTokens);

template <class G, QuantGemmLayout L, int T>
inline void quant_gemm_tile_t(int64_t blocks, const uint8_t* panel, int rows, int tokens, const uint8_t* x,
                              size_t x_stride, float* c, int64_t ldc, bool accumulate) {
  constexpr int kLanes = G::kLanes;
  constexpr size_t kWeightBlock = L.weight_block_bytes(kLanes), kTokenBlock = L.activation_block_bytes();
  constexpr int kGroups = L.block / L.group;
  const uint8_t* xt[T];
  // past `tokens`: computed, not stored
  for (int t = 0; t < T; ++t) xt[t] = x + size_t(std::min(t, tokens - 1)) * x_stride;
  typename G::F acc[T];
  for (int t = 0; t < T; ++t) acc[t] = G::fzero();
  for (int64_t b = 0; b < blocks; ++b) {
    const uint8_t* w = panel + size_t(b) * kWeightBlock;
    const auto* scales = reinterpret_cast<const int32_t*>(w + L.scales_at(kLanes));
    const auto* d = reinterpret_cast<const float*>(w + L.steps_at(kLanes));
    const auto* offsets = reinterpret_cast<const float*>(w + L.offsets_at(kLanes));
    const size_t xb = size_t(b) * kTokenBlock;
    auto quants = [&](int step) { return G::load_w(w + step * 4 * kLanes); };
    auto activations = [&](int t, int step) { return reinterpret_cast<const int8_t*>(xt[t] + xb) + 4 * step; };
    typename G::I sum[T];
    for (int t = 0; t < T; ++t) sum[t] = G::izero();
    // Elements 16s .. 16s + 15: 4 steps of 4.
    for (int s = 0; s < L.block / 16; ++s) {
      if constexpr (G::kDpbusd && L.int_scales) {
        typename G::I part[T];
        for (int t = 0; t < T; ++t) part[t] = G::izero();
#pragma GCC unroll 4
        for (int j = 0; j < 4; ++j) {
          const typename G::W q = quants(4 * s + j);
#pragma GCC unroll 12
          for (int t = 0; t < T; ++t) part[t] = G::dot4(part[t], q, activations(t, 4 * s + j));
        }
        const typename G::I scale = G::load_i(scales + s * kLanes);
#pragma GCC unroll 12
        for (int t = 0; t < T; ++t) sum[t] = G::scale_add(sum[t], part[t], scale);
      } else if constexpr (G::kDpbusd) {
#pragma GCC unroll 4
        for (int j = 0; j < 4; ++j) {
          typename G::W q = quants(4 * s + j);
          if constexpr (L.signed_quants) q = G::flip_sign(q);
#pragma GCC unroll 12
          for (int t = 0; t < T; ++t) sum[t] = G::dot4(sum[t], q, activations(t, 4 * s + j));
        }
      } else if constexpr (L.signed_quants) {
#pragma GCC unroll 4
        for (int j = 0; j < 4; ++j) {
          const typename G::SignedW q = G::split_sign(quants(4 * s + j));
#pragma GCC unroll 12
          for (int t = 0; t < T; ++t) sum[t] = G::dot4_signed_add(sum[t], q, activations(t, 4 * s + j));
        }
      } else if constexpr (G::kInt16Pairs) {
        // int16 pairs of products added over int16_steps() steps, then one madd by the scale.
        constexpr int kSteps = L.int16_steps();
        const typename G::I scale = L.int_scales ? G::load_i(scales + s * kLanes) : G::ones();
#pragma GCC unroll 4
        for (int j0 = 0; j0 < 4; j0 += kSteps) {
          typename G::P pairs[T];
          const typename G::W q0 = quants(4 * s + j0);
#pragma GCC unroll 12
          for (int t = 0; t < T; ++t) pairs[t] = G::dot4_pairs(q0, activations(t, 4 * s + j0));
#pragma GCC unroll 4
          for (int j = j0 + 1; j < j0 + kSteps; ++j) {
            const typename G::W q = quants(4 * s + j);
#pragma GCC unroll 12
            for (int t = 0; t < T; ++t) pairs[t] = G::add_pairs(pairs[t], G::dot4_pairs(q, activations(t, 4 * s + j)));
          }
#pragma GCC unroll 12
          for (int t = 0; t < T; ++t) sum[t] = G::scale_pairs_add(sum[t], pairs[t], scale);
        }
      } else {
        const typename G::I scale = L.int_scales ? G::load_i(scales + s * kLanes) : G::ones();
#pragma GCC unroll 4
        for (int j = 0; j < 4; ++j) {
          const typename G::W q = quants(4 * s + j);
#pragma GCC unroll 12
          for (int t = 0; t < T; ++t) sum[t] = G::dot4_add(sum[t], q, activations(t, 4 * s + j), scale);
        }
      }
    }
    for (int g = 0; g < kGroups; ++g) {
      if constexpr (L.signed_quants) {
        if constexpr (G::kDpbusd) {
#pragma GCC unroll 12
          for (int t = 0; t < T; ++t) {
            int32_t group_sum;
            std::memcpy(&group_sum, xt[t] + xb + L.sums_at() + 4 * g, sizeof group_sum);
            sum[t] = G::sub(sum[t], 128 * group_sum);
          }
        }
        continue;
      }
      const typename G::F offset = G::load_f(offsets + g * kLanes);
#pragma GCC unroll 12
      for (int t = 0; t < T; ++t) {
        float group_sum;
        std::memcpy(&group_sum, xt[t] + xb + L.sums_at() + 4 * g, sizeof group_sum);
        acc[t] = G::fmadd(offset, group_sum, acc[t]);
      }
    }
    const typename G::F step = G::load_f(d);
#pragma GCC unroll 12
    for (int t = 0; t < T; ++t) {
      float dx;
      std::memcpy(&dx, xt[t] + xb + L.dx_at(), sizeof dx);
      acc[t] = G::fold(acc[t], sum[t], step, dx);
    }
  }
  for (int t = 0; t < tokens; ++t) {
    float* row = c + t * ldc;
    if (rows == kLanes) {
      G::store(row, acc[t], accumulate);
      continue;
    }
    float lanes[kLanes];
    G::store(lanes, acc[t], false);
    for (int j = 0; j < rows; ++j) row[j] = accumulate ? row[j] + lanes[j] : lanes[j];
  }
}

template <QuantGemmLayout L>
void tiles_of(int64_t n, const uint8_t* panels, size_t panel_stride, int rows, int tokens, const uint8_t* x,
              size_t x_stride, float* c, int64_t ldc, bool accumulate) {
  for (int r0 = 0; r0 < rows; r0 += GL::kLanes) {
    quant_gemm_tile_t<GL, L, GL::kTileTokens>(n / L.block, panels + size_t(r0 / GL::kLanes) * panel_stride,
                                              std::min(GL::kLanes, rows - r0), tokens, x, x_stride, c + r0, ldc,
                                              accumulate);
  }
}

void quant_gemm_tiles(QuantGemmLayout layout, int64_t n, const uint8_t* panels, size_t panel_stride, int rows,
                      int tokens, const uint8_t* x, size_t x_stride, float* c, int64_t ldc, bool accumulate) {
  if (layout.int_scales && layout.max_quant > kQuantGemmK.max_quant) {
    tiles_of<kQuantGemmQ6K>(n, panels, panel_stride, rows, tokens, x, x_stride, c, ldc, accumulate);
  } else if (layout.int_scales) {
    tiles_of<kQuantGemmK>(n, panels, panel_stride, rows, tokens, x, x_stride, c, ldc, accumulate);
  } else if (layout.signed_quants) {
    tiles_of<kQuantGemm8>(n, panels, panel_stride, rows, tokens, x, x_stride, c, ldc, accumulate);
  } else {
    tiles_of<kQuantGemm32>(n, panels, panel_stride, rows, tokens, x, x_stride, c, ldc, accumulate);
  }
}
