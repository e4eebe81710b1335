// The activations of quantized matrix products (quant.h): q8_K for the K types, q8_32 for
// q8_0 and q4_0..q5_1. Backends must give MUL_MAT these values, so the rule is defined once, here, and
// the CPU's vector quantizers are tested against it byte for byte.
#include <algorithm>
#include <cmath>
#include <limits>

#include "quant_internal.h"
#include "tilegraph/core/quant.h"

namespace tg {

namespace {

// Quantizes `count` values to q (quant.h's rule); returns d.
float quantize_block(const float* x, int count, int8_t* q) {
  float amax = 0.0f;
  bool finite = true;
  for (int i = 0; i < count; ++i) {
    amax = std::max(amax, std::fabs(x[i]));
    finite = finite && std::isfinite(x[i]);
  }
  const float d = amax / 127.0f;
  const bool usable = finite && d > 0.0f;
  for (int i = 0; i < count; ++i) {
    q[i] = int8_t(usable ? std::clamp(int(std::nearbyint(x[i] / d)), -127, 127) : 0);
  }
  return finite ? d : std::numeric_limits<float>::quiet_NaN();
}

int sum_of(const int8_t* q, int count) {
  int sum = 0;
  for (int i = 0; i < count; ++i) sum += q[i];
  return sum;
}

}  // namespace

ActivationType activation_type(DType weight_type) {
  switch (weight_type) {
    case DType::Q4_K:
    case DType::Q5_K:
    case DType::Q6_K: return ActivationType::Q8_K;
    case DType::Q8_0:
    case DType::Q4_0:
    case DType::Q4_1:
    case DType::Q5_0:
    case DType::Q5_1: return ActivationType::Q8_32;
    case DType::BF16: return ActivationType::BF16;
    default: return ActivationType::F32;
  }
}

void quantize_row_q8_K(const float* x, BlockQ8_K* y, int64_t n) {
  detail::check_whole_blocks("quantize_row_q8_K", n, kQKBlockSize);
  for (int64_t b = 0; b < n / kQKBlockSize; ++b) {
    y[b].d = quantize_block(x + b * kQKBlockSize, kQKBlockSize, y[b].qs);
    for (int s = 0; s < kQKBlockSize / 16; ++s) y[b].bsums[s] = int16_t(sum_of(y[b].qs + 16 * s, 16));
  }
}

void dequantize_row_q8_K(const BlockQ8_K* x, float* y, int64_t n) {
  detail::check_whole_blocks("dequantize_row_q8_K", n, kQKBlockSize);
  for (int64_t b = 0; b < n / kQKBlockSize; ++b) {
    for (int i = 0; i < kQKBlockSize; ++i) y[b * kQKBlockSize + i] = x[b].d * float(x[b].qs[i]);
  }
}

float q8_32_step(float d) { return f16_to_f32(f32_to_f16(d)); }

float q8_32_sum(float d, int32_t quant_sum) { return q8_32_step(d * float(quant_sum)); }

void quantize_row_q8_32(const float* x, BlockQ8_32* y, int64_t n) {
  detail::check_whole_blocks("quantize_row_q8_32", n, kQ8_32BlockSize);
  for (int64_t b = 0; b < n / kQ8_32BlockSize; ++b) {
    const float d = quantize_block(x + b * kQ8_32BlockSize, kQ8_32BlockSize, y[b].qs);
    y[b].d = q8_32_step(d);
    y[b].s = q8_32_sum(d, sum_of(y[b].qs, kQ8_32BlockSize));
  }
}

void dequantize_row_q8_32(const BlockQ8_32* x, float* y, int64_t n) {
  detail::check_whole_blocks("dequantize_row_q8_32", n, kQ8_32BlockSize);
  for (int64_t b = 0; b < n / kQ8_32BlockSize; ++b) {
    for (int i = 0; i < kQ8_32BlockSize; ++i) y[b * kQ8_32BlockSize + i] = x[b].d * float(x[b].qs[i]);
  }
}

namespace {

// x through `quantize` and `dequantize`, one block at a time.
template <class Block>
void round_through(const char* what, float* x, int64_t n, void (*quantize)(const float*, Block*, int64_t),
                   void (*dequantize)(const Block*, float*, int64_t)) {
  constexpr int kBlock = int(sizeof(Block::qs));
  detail::check_whole_blocks(what, n, kBlock);
  Block block;
  for (int64_t i = 0; i < n; i += kBlock) {
    quantize(x + i, &block, kBlock);
    dequantize(&block, x + i, kBlock);
  }
}

}  // namespace

void round_activations(DType weight_type, float* x, int64_t n) {
  switch (activation_type(weight_type)) {
    case ActivationType::F32: return;
    case ActivationType::BF16:
      for (int64_t i = 0; i < n; ++i) x[i] = bf16_to_f32(f32_to_bf16(x[i]));
      return;
    case ActivationType::Q8_K:
      return round_through<BlockQ8_K>("round_activations to q8_K", x, n, quantize_row_q8_K, dequantize_row_q8_K);
    case ActivationType::Q8_32:
      return round_through<BlockQ8_32>("round_activations to q8_32", x, n, quantize_row_q8_32, dequantize_row_q8_32);
  }
}

}  // namespace tg
