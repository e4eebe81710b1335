// q4_0, q4_1, q5_0 and q5_1: ggml's 32-element blocks of 4- and 5-bit quants (layouts in quant.h).
// The quantizers follow the rules of ggml's reference quantizers (quantize_row_*_ref), which
// llama.cpp uses for these types when it has no importance matrix.
#include <algorithm>
#include <cmath>

#include "quant_internal.h"
#include "tilegraph/core/quant.h"

namespace tg {

namespace {

constexpr int kBlock = 32;  // every type here
constexpr int kHalf = kBlock / 2;

// The value of largest magnitude, with its sign (the first one on ties).
float signed_absmax(const float* x) {
  float amax = 0.0f, max = 0.0f;
  for (int i = 0; i < kBlock; ++i) {
    if (std::fabs(x[i]) > amax) {
      amax = std::fabs(x[i]);
      max = x[i];
    }
  }
  return max;
}

// Symmetric ("type-0") quants of `bits` bits: d = -max / 2^(bits-1), so the value of largest
// magnitude maps to quant 0 exactly; q = round-half-up(x / d) + 2^(bits-1), at most 2^bits - 1.
float quantize_symmetric(const float* x, int bits, uint8_t* q) {
  const int offset = 1 << (bits - 1), top = (1 << bits) - 1;
  const float d = signed_absmax(x) / float(-offset);
  const float inverse = d != 0.0f ? 1.0f / d : 0.0f;
  for (int i = 0; i < kBlock; ++i) {
    // Truncating x/d + offset + 0.5 rounds half up; the sum is >= 0.5 (x/d >= -offset).
    q[i] = uint8_t(std::min(top, int(x[i] * inverse + (float(offset) + 0.5f))));
  }
  return d;
}

// Affine ("type-1") quants: d = (max - min) / (2^bits - 1), m = min, q = round-half-up((x - m) / d).
void quantize_affine(const float* x, int bits, uint8_t* q, float* d_out, float* m_out) {
  const int top = (1 << bits) - 1;
  float lo = x[0], hi = x[0];
  for (int i = 1; i < kBlock; ++i) {
    lo = std::min(lo, x[i]);
    hi = std::max(hi, x[i]);
  }
  const float d = (hi - lo) / float(top);
  const float inverse = d != 0.0f ? 1.0f / d : 0.0f;
  for (int i = 0; i < kBlock; ++i) q[i] = uint8_t(std::min(top, int((x[i] - lo) * inverse + 0.5f)));
  *d_out = d;
  *m_out = lo;
}

// Low 4 bits of quants j and j + 16 into byte j.
void pack_nibbles(const uint8_t* q, uint8_t* qs) {
  for (int j = 0; j < kHalf; ++j) qs[j] = uint8_t((q[j] & 0xF) | (q[j + kHalf] & 0xF) << 4);
}
void unpack_nibbles(const uint8_t* qs, int* q) {
  for (int j = 0; j < kHalf; ++j) {
    q[j] = qs[j] & 0xF;
    q[j + kHalf] = qs[j] >> 4;
  }
}

// The 5th bit of quant i at bit i of a little-endian uint32.
void pack_high_bits(const uint8_t* q, uint8_t* qh) {
  uint32_t bits = 0;
  for (int i = 0; i < kBlock; ++i) bits |= uint32_t(q[i] >> 4 & 1) << i;
  for (int b = 0; b < 4; ++b) qh[b] = uint8_t(bits >> (8 * b));
}
void add_high_bits(const uint8_t* qh, int* q) {
  for (int i = 0; i < kBlock; ++i) q[i] |= (qh[i / 8] >> (i % 8) & 1) << 4;
}

}  // namespace

void quantize_row_q4_0(const float* x, BlockQ4_0* y, int64_t n) {
  detail::check_whole_blocks("quantize_row_q4_0", n, kBlock);
  for (int64_t b = 0; b < n / kBlock; ++b) {
    uint8_t q[kBlock];
    y[b].d = f32_to_f16(quantize_symmetric(x + b * kBlock, 4, q));
    pack_nibbles(q, y[b].qs);
  }
}

void dequantize_row_q4_0(const BlockQ4_0* x, float* y, int64_t n) {
  detail::check_whole_blocks("dequantize_row_q4_0", n, kBlock);
  for (int64_t b = 0; b < n / kBlock; ++b) {
    const float d = f16_to_f32(x[b].d);
    int q[kBlock];
    unpack_nibbles(x[b].qs, q);
    for (int i = 0; i < kBlock; ++i) y[b * kBlock + i] = float(q[i] - 8) * d;
  }
}

void quantize_row_q4_1(const float* x, BlockQ4_1* y, int64_t n) {
  detail::check_whole_blocks("quantize_row_q4_1", n, kBlock);
  for (int64_t b = 0; b < n / kBlock; ++b) {
    uint8_t q[kBlock];
    float d, m;
    quantize_affine(x + b * kBlock, 4, q, &d, &m);
    y[b].d = f32_to_f16(d);
    y[b].m = f32_to_f16(m);
    pack_nibbles(q, y[b].qs);
  }
}

void dequantize_row_q4_1(const BlockQ4_1* x, float* y, int64_t n) {
  detail::check_whole_blocks("dequantize_row_q4_1", n, kBlock);
  for (int64_t b = 0; b < n / kBlock; ++b) {
    const float d = f16_to_f32(x[b].d), m = f16_to_f32(x[b].m);
    int q[kBlock];
    unpack_nibbles(x[b].qs, q);
    for (int i = 0; i < kBlock; ++i) y[b * kBlock + i] = float(q[i]) * d + m;
  }
}

void quantize_row_q5_0(const float* x, BlockQ5_0* y, int64_t n) {
  detail::check_whole_blocks("quantize_row_q5_0", n, kBlock);
  for (int64_t b = 0; b < n / kBlock; ++b) {
    uint8_t q[kBlock];
    y[b].d = f32_to_f16(quantize_symmetric(x + b * kBlock, 5, q));
    pack_nibbles(q, y[b].qs);
    pack_high_bits(q, y[b].qh);
  }
}

void dequantize_row_q5_0(const BlockQ5_0* x, float* y, int64_t n) {
  detail::check_whole_blocks("dequantize_row_q5_0", n, kBlock);
  for (int64_t b = 0; b < n / kBlock; ++b) {
    const float d = f16_to_f32(x[b].d);
    int q[kBlock];
    unpack_nibbles(x[b].qs, q);
    add_high_bits(x[b].qh, q);
    for (int i = 0; i < kBlock; ++i) y[b * kBlock + i] = float(q[i] - 16) * d;
  }
}

void quantize_row_q5_1(const float* x, BlockQ5_1* y, int64_t n) {
  detail::check_whole_blocks("quantize_row_q5_1", n, kBlock);
  for (int64_t b = 0; b < n / kBlock; ++b) {
    uint8_t q[kBlock];
    float d, m;
    quantize_affine(x + b * kBlock, 5, q, &d, &m);
    y[b].d = f32_to_f16(d);
    y[b].m = f32_to_f16(m);
    pack_nibbles(q, y[b].qs);
    pack_high_bits(q, y[b].qh);
  }
}

void dequantize_row_q5_1(const BlockQ5_1* x, float* y, int64_t n) {
  detail::check_whole_blocks("dequantize_row_q5_1", n, kBlock);
  for (int64_t b = 0; b < n / kBlock; ++b) {
    const float d = f16_to_f32(x[b].d), m = f16_to_f32(x[b].m);
    int q[kBlock];
    unpack_nibbles(x[b].qs, q);
    add_high_bits(x[b].qh, q);
    for (int i = 0; i < kBlock; ++i) y[b * kBlock + i] = float(q[i]) * d + m;
  }
}

}  // namespace tg
