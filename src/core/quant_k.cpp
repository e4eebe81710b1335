// q4_K, q5_K and q6_K: ggml's "k-quants", 256-element super-blocks whose sub-blocks have their
// own scales, themselves quantized against one f16 scale per super-block (layouts in quant.h).
//
// The quantizers are simpler than ggml's (which searches each sub-block for the scale and min of
// least weighted error): each sub-block spans its own range, and the 6- or 8-bit sub-block
// scales are rounded up so that the span stays covered. The encodings are the same format;
// quant.h states the error bounds, which tests/unit/core/test_quant.cpp checks.
#include <algorithm>
#include <cmath>

#include "quant_internal.h"
#include "tilegraph/core/quant.h"

namespace tg {

namespace {

constexpr int kBlock = kQKBlockSize;
constexpr int kSub4 = 32;  // q4_K/q5_K sub-block
constexpr int kSub6 = 16;  // q6_K sub-block

int nearest(float x) { return int(std::lround(x)); }

// The f16 nearest to x >= 0, one step up if that is below x: a super-block scale that the
// largest sub-block scale still fits under in its 6 (8) bits, even where f16 is coarse
// (subnormal below 6e-5).
f16 f16_at_least(float x) {
  f16 h = f32_to_f16(x);
  if (f16_to_f32(h) < x) ++h.bits;  // the next f16 up, for positive finite values
  return h;
}

// Affine quants of a super-block for q4_K (top 15) and q5_K (top 31): q[i] in 0..top, the packed
// 6-bit scales and mins, and the f16 super-block scales. Element i decodes to
// d*sc_s * q[i] - dmin*m_s, s = i / 32.
void quantize_affine_k(const float* x, int top, uint8_t* q, uint8_t* scales, f16* d_out, f16* dmin_out) {
  constexpr int kSubs = kBlock / kSub4;
  float lo[kSubs], hi[kSubs];
  float max_step = 0.0f, max_offset = 0.0f;
  for (int s = 0; s < kSubs; ++s) {
    const float* xs = x + s * kSub4;
    // The min is subtracted as dmin * m with m >= 0, so it can only move the span down from 0.
    lo[s] = 0.0f;
    hi[s] = xs[0];
    for (int i = 0; i < kSub4; ++i) {
      lo[s] = std::min(lo[s], xs[i]);
      hi[s] = std::max(hi[s], xs[i]);
    }
    max_step = std::max(max_step, (hi[s] - lo[s]) / float(top));
    max_offset = std::max(max_offset, -lo[s]);
  }
  *d_out = f16_at_least(max_step / 63.0f);
  *dmin_out = f16_at_least(max_offset / 63.0f);
  // Sub-block scales and quants are chosen against d and dmin as stored (f16), so rounding those
  // adds no error of its own.
  const float d = f16_to_f32(*d_out), dmin = f16_to_f32(*dmin_out);
  int sc[kSubs], m[kSubs];
  for (int s = 0; s < kSubs; ++s) {
    m[s] = dmin > 0.0f ? std::min(63, nearest(-lo[s] / dmin)) : 0;
    const float offset = dmin * float(m[s]);
    // Rounded up, so that offset + top * step reaches hi (unless the 6 bits run out).
    sc[s] = d > 0.0f ? std::clamp(int(std::ceil((hi[s] + offset) / (float(top) * d))), 0, 63) : 0;
    const float step = d * float(sc[s]);
    const float inverse = step > 0.0f ? 1.0f / step : 0.0f;
    for (int i = 0; i < kSub4; ++i) {
      const int index = s * kSub4 + i;
      q[index] = uint8_t(std::clamp(nearest((x[index] + offset) * inverse), 0, top));
    }
  }
  // The inverse of unpack_scale_min_k.
  for (int s = 0; s < 4; ++s) {
    scales[s] = uint8_t(sc[s] | (sc[s + 4] >> 4) << 6);
    scales[s + 4] = uint8_t(m[s] | (m[s + 4] >> 4) << 6);
    scales[s + 8] = uint8_t((sc[s + 4] & 0xF) | (m[s + 4] & 0xF) << 4);
  }
}

// Element i of a q4_K/q5_K block from its quant: d*sc_s * q - dmin*m_s. Both products are exact
// in f32 (an 11-bit significand times 6 bits, then times 5 bits), so this rounds once, as ggml's
// dequantization and the CPU kernels' fused multiply-add do.
void dequantize_affine_k(f16 d16, f16 dmin16, const uint8_t* scales, const int* q, float* y) {
  const float d = f16_to_f32(d16), dmin = f16_to_f32(dmin16);
  for (int s = 0; s < kBlock / kSub4; ++s) {
    int sc, m;
    unpack_scale_min_k(scales, s, &sc, &m);
    const float step = d * float(sc), offset = dmin * float(m);
    for (int i = s * kSub4; i < (s + 1) * kSub4; ++i) y[i] = step * float(q[i]) - offset;
  }
}

// Quant 64c + l at the low nibble of qs[32c + l], 64c + 32 + l at its high nibble.
void pack_nibbles_k(const uint8_t* q, uint8_t* qs) {
  for (int c = 0; c < kBlock / 64; ++c) {
    for (int l = 0; l < 32; ++l) {
      qs[32 * c + l] = uint8_t((q[64 * c + l] & 0xF) | (q[64 * c + 32 + l] & 0xF) << 4);
    }
  }
}
void unpack_nibbles_k(const uint8_t* qs, int* q) {
  for (int c = 0; c < kBlock / 64; ++c) {
    for (int l = 0; l < 32; ++l) {
      q[64 * c + l] = qs[32 * c + l] & 0xF;
      q[64 * c + 32 + l] = qs[32 * c + l] >> 4;
    }
  }
}

}  // namespace

void quantize_row_q4_K(const float* x, BlockQ4_K* y, int64_t n) {
  detail::check_whole_blocks("quantize_row_q4_K", n, kBlock);
  for (int64_t b = 0; b < n / kBlock; ++b) {
    uint8_t q[kBlock];
    quantize_affine_k(x + b * kBlock, 15, q, y[b].scales, &y[b].d, &y[b].dmin);
    pack_nibbles_k(q, y[b].qs);
  }
}

void dequantize_row_q4_K(const BlockQ4_K* x, float* y, int64_t n) {
  detail::check_whole_blocks("dequantize_row_q4_K", n, kBlock);
  for (int64_t b = 0; b < n / kBlock; ++b) {
    int q[kBlock];
    unpack_nibbles_k(x[b].qs, q);
    dequantize_affine_k(x[b].d, x[b].dmin, x[b].scales, q, y + b * kBlock);
  }
}

void quantize_row_q5_K(const float* x, BlockQ5_K* y, int64_t n) {
  detail::check_whole_blocks("quantize_row_q5_K", n, kBlock);
  for (int64_t b = 0; b < n / kBlock; ++b) {
    uint8_t q[kBlock];
    quantize_affine_k(x + b * kBlock, 31, q, y[b].scales, &y[b].d, &y[b].dmin);
    pack_nibbles_k(q, y[b].qs);
    // The 5th bit of quant 64c + l at bit 2c of qh[l], of 64c + 32 + l at bit 2c + 1.
    std::fill(std::begin(y[b].qh), std::end(y[b].qh), uint8_t(0));
    for (int c = 0; c < kBlock / 64; ++c) {
      for (int l = 0; l < 32; ++l) {
        y[b].qh[l] |= uint8_t((q[64 * c + l] >> 4) << (2 * c) | (q[64 * c + 32 + l] >> 4) << (2 * c + 1));
      }
    }
  }
}

void dequantize_row_q5_K(const BlockQ5_K* x, float* y, int64_t n) {
  detail::check_whole_blocks("dequantize_row_q5_K", n, kBlock);
  for (int64_t b = 0; b < n / kBlock; ++b) {
    int q[kBlock];
    unpack_nibbles_k(x[b].qs, q);
    for (int c = 0; c < kBlock / 64; ++c) {
      for (int l = 0; l < 32; ++l) {
        q[64 * c + l] |= (x[b].qh[l] >> (2 * c) & 1) << 4;
        q[64 * c + 32 + l] |= (x[b].qh[l] >> (2 * c + 1) & 1) << 4;
      }
    }
    dequantize_affine_k(x[b].d, x[b].dmin, x[b].scales, q, y + b * kBlock);
  }
}

void quantize_row_q6_K(const float* x, BlockQ6_K* y, int64_t n) {
  detail::check_whole_blocks("quantize_row_q6_K", n, kBlock);
  constexpr int kSubs = kBlock / kSub6;
  for (int64_t b = 0; b < n / kBlock; ++b) {
    const float* xb = x + b * kBlock;
    // Symmetric steps max|x| / 31: quants -31..31 of the format's -32..31, so no value clamps.
    float step[kSubs], max_step = 0.0f;
    for (int s = 0; s < kSubs; ++s) {
      float amax = 0.0f;
      for (int i = 0; i < kSub6; ++i) amax = std::max(amax, std::fabs(xb[s * kSub6 + i]));
      step[s] = amax / 31.0f;
      max_step = std::max(max_step, step[s]);
    }
    y[b].d = f16_at_least(max_step / 127.0f);
    const float d = f16_to_f32(y[b].d);
    uint8_t q[kBlock];
    for (int s = 0; s < kSubs; ++s) {
      // Rounded up: the stored step is never smaller than the sub-block's own.
      const int sc = d > 0.0f ? std::min(127, int(std::ceil(step[s] / d))) : 0;
      y[b].scales[s] = int8_t(sc);
      const float stored = d * float(sc);
      const float inverse = stored > 0.0f ? 1.0f / stored : 0.0f;
      for (int i = s * kSub6; i < (s + 1) * kSub6; ++i) {
        q[i] = uint8_t(std::clamp(nearest(xb[i] * inverse), -32, 31) + 32);
      }
    }
    for (int h = 0; h < 2; ++h) {
      const uint8_t* qh_src = q + 128 * h;
      for (int l = 0; l < 32; ++l) {
        y[b].ql[64 * h + l] = uint8_t((qh_src[l] & 0xF) | (qh_src[64 + l] & 0xF) << 4);
        y[b].ql[64 * h + 32 + l] = uint8_t((qh_src[32 + l] & 0xF) | (qh_src[96 + l] & 0xF) << 4);
        y[b].qh[32 * h + l] = uint8_t(qh_src[l] >> 4 | (qh_src[32 + l] >> 4) << 2 | (qh_src[64 + l] >> 4) << 4 |
                                      (qh_src[96 + l] >> 4) << 6);
      }
    }
  }
}

void dequantize_row_q6_K(const BlockQ6_K* x, float* y, int64_t n) {
  detail::check_whole_blocks("dequantize_row_q6_K", n, kBlock);
  for (int64_t b = 0; b < n / kBlock; ++b) {
    const float d = f16_to_f32(x[b].d);
    int q[kBlock];
    for (int h = 0; h < 2; ++h) {
      const uint8_t* ql = x[b].ql + 64 * h;
      const uint8_t* qh = x[b].qh + 32 * h;
      int* qq = q + 128 * h;
      for (int l = 0; l < 32; ++l) {
        qq[l] = (ql[l] & 0xF) | (qh[l] & 3) << 4;
        qq[32 + l] = (ql[32 + l] & 0xF) | (qh[l] >> 2 & 3) << 4;
        qq[64 + l] = (ql[l] >> 4) | (qh[l] >> 4 & 3) << 4;
        qq[96 + l] = (ql[32 + l] >> 4) | (qh[l] >> 6 & 3) << 4;
      }
    }
    // (d * sc) is exact in f32 and the product with (q - 32) rounds once, as in ggml.
    for (int i = 0; i < kBlock; ++i) {
      y[b * kBlock + i] = d * float(x[b].scales[i / kSub6]) * float(q[i] - 32);
    }
  }
}

}  // namespace tg
