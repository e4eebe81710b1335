// The operands of the integer GEMM of quantized weights (vec.h: QuantGemmLayout,
// pack_quant_panel, pack_quant_activations), written once against V::GL (simd.h: one weight row
// per lane) and V::Q32 (the decoders of vec_impl_int_dot.h unpack the quants); the micro-tile is
// vec_impl_int_gemm_tile.h. Part of vec_impl.h, included inside its ISA namespace after
// vec_impl_int_dot.h.

using GL = V::GL;

// A K type's int16 scale and f32 offset per 16 elements; returns d.
template <class B>
inline float gemm_scales(const B& b, const float* f16_table, int16_t scale[16], float offset[16]) {
  uint8_t sc_m[16];
  simd::unpack_scales_mins_k(b.scales, sc_m);
  const float dmin = f16_table[b.dmin.bits];
  for (int g = 0; g < 16; ++g) {
    scale[g] = sc_m[g / 2];
    offset[g] = -dmin * float(sc_m[8 + g / 2]);
  }
  return f16_table[b.d.bits];
}
inline float gemm_scales(const BlockQ6_K& b, const float* f16_table, int16_t scale[16], float offset[16]) {
  const float d = f16_table[b.d.bits];
  for (int g = 0; g < 16; ++g) {
    scale[g] = b.scales[g];
    offset[g] = -32.0f * d * float(b.scales[g]);
  }
  return d;
}

// The driver packs a row's K blocks in order: request the next one (`bytes` from `next`) while
// this one is unpacked, a stream per row being more than the hardware prefetcher follows.
inline void prefetch_next(const char* next, size_t bytes) {
  for (size_t offset = 0; offset < bytes; offset += 64) __builtin_prefetch(next + offset);
}

// `rows` rows of blocks of decoder D into the panel, one row per lane: block by block, each
// piece of 32 quants of every row decoded into rows-of-bytes, then interleaved into the panel's
// [block / 4][kLanes][4] bytes by one transpose (GL::interleave_quads).
template <class D, QuantGemmLayout L>
inline void pack_panel(int64_t blocks, int rows, const char* first_row, size_t stride, uint8_t* panel,
                       const float* f16_table) {
  constexpr int kLanes = GL::kLanes;
  auto row_of = [&](int r) { return reinterpret_cast<const typename D::Block*>(first_row + size_t(r) * stride); };
  for (int r = 0; r < rows; ++r) {
    prefetch_next(reinterpret_cast<const char*>(row_of(r) + blocks), size_t(blocks) * sizeof(typename D::Block));
  }
  // Rows past `rows` stay zero.
  alignas(64) uint8_t pieces[kLanes][32] = {};
  for (int64_t b = 0; b < blocks; ++b) {
    uint8_t* q = panel + size_t(b) * L.weight_block_bytes(kLanes);
    auto* scales = reinterpret_cast<int32_t*>(q + L.scales_at(kLanes));
    auto* d = reinterpret_cast<float*>(q + L.steps_at(kLanes));
    auto* offsets = reinterpret_cast<float*>(q + L.offsets_at(kLanes));
    for (int r = 0; r < rows; ++r) {
      const typename D::Block& block = row_of(r)[b];
      if constexpr (L.int_scales) {
        int16_t scale[16];
        float offset[16];
        d[r] = gemm_scales(block, f16_table, scale, offset);
        for (int g = 0; g < 16; ++g) scales[g * kLanes + r] = int32_t(uint32_t(uint16_t(scale[g])) * 0x10001u);
        for (int g = 0; g < L.block / L.group; ++g) offsets[g * kLanes + r] = offset[g * L.group / 16];
      } else {
        d[r] = block_step(block, f16_table);
        if constexpr (!L.signed_quants) offsets[r] = block_offset(block, f16_table);
      }
    }
    for (int p = 0; p < L.block / 32; ++p) {
      for (int r = 0; r < rows; ++r) {
        if constexpr (L.int_scales) {
          Q32::store_u8(pieces[r], D::piece(row_of(r)[b], p));
        } else {
          Q32::store_u8(pieces[r], D::quants(row_of(r)[b]));
        }
      }
      GL::interleave_quads(pieces[0], q + size_t(p) * 32 * kLanes);
    }
  }
}

void pack_quant_panel(DType type, int64_t n, int rows, const void* first_row, size_t stride, uint8_t* panel) {
  const QuantGemmLayout layout = quant_gemm_layout(type);
  const int64_t blocks = n / layout.block;
  if (rows < GL::kLanes) std::memset(panel, 0, size_t(blocks) * layout.weight_block_bytes(GL::kLanes));
  const char* first = static_cast<const char*>(first_row);
  const float* f16_table = f16_to_f32_table();
  if (layout.int_scales) {
    with_q8k_decoder(type, [&]<class D>(D) {
      if (type == DType::Q6_K) {
        pack_panel<D, kQuantGemmQ6K>(blocks, rows, first, stride, panel, f16_table);
      } else {
        pack_panel<D, kQuantGemmK>(blocks, rows, first, stride, panel, f16_table);
      }
    });
  } else {
    with_q8_32_decoder(type, [&]<class D>(D) {
      pack_panel<D, D::kSigned ? kQuantGemm8 : kQuantGemm32>(blocks, rows, first, stride, panel, f16_table);
    });
  }
}

void pack_quant_activations(DType weight_type, int64_t n, const float* x, uint8_t* out) {
  const QuantGemmLayout layout = quant_gemm_layout(weight_type);
  const bool offset_by_f16_sum = weight_type == DType::Q4_1 || weight_type == DType::Q5_1;
  const size_t block_bytes = layout.activation_block_bytes();
  for (int64_t b = 0; b < n / layout.block; ++b) {
    uint8_t* record = out + size_t(b) * block_bytes;
    auto* q = reinterpret_cast<int8_t*>(record);
    const float d = quantize_block_q8(x + b * layout.block, layout.block, q);
    const float dx = layout.block == kQ8_32BlockSize ? tg::q8_32_step(d) : d;
    std::memcpy(record + layout.dx_at(), &dx, sizeof dx);
    for (int g = 0; g < layout.block / layout.group; ++g) {
      const int32_t quants = sum_of(q + g * layout.group, layout.group);
      if (layout.signed_quants) {
        std::memcpy(record + layout.sums_at() + 4 * g, &quants, sizeof quants);
      } else {
        // q4_1's and q5_1's m against BlockQ8_32::s (ggml's q8_1 sum, in f16), as in decode; the
        // centred types' offsets against the exact dx * quants (decode's integer centre).
        const float sum = offset_by_f16_sum ? tg::q8_32_sum(d, quants) : dx * float(quants);
        std::memcpy(record + layout.sums_at() + 4 * g, &sum, sizeof sum);
      }
    }
  }
}

#include "vec_impl_int_gemm_tile.h"
