// f16/bf16/q8_0 conversions against independent oracles: the CPU's own F16C instructions for
// f16 (every f16 value, and floats across the whole range), a wide-integer model for bf16.
#include <gtest/gtest.h>
#include <immintrin.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "tilegraph/core/dtype.h"
#include "tilegraph/core/error.h"

namespace tg {
namespace {

__attribute__((target("f16c"))) uint16_t hardware_f32_to_f16(float x) {
  return uint16_t(_mm_extract_epi16(_mm_cvtps_ph(_mm_set_ss(x), _MM_FROUND_TO_NEAREST_INT), 0));
}
__attribute__((target("f16c"))) float hardware_f16_to_f32(uint16_t h) {
  return _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(h)));
}
bool have_f16c() { return __builtin_cpu_supports("avx") && __builtin_cpu_supports("f16c"); }

TEST(DType, TraitsAndRowSize) {
  EXPECT_EQ(dtype_name(DType::Q8_0), "q8_0");
  EXPECT_EQ(row_size(DType::F32, 7), 28u);
  EXPECT_EQ(row_size(DType::BF16, 3), 6u);
  EXPECT_EQ(row_size(DType::Q8_0, 64), 68u);
  EXPECT_THROW(row_size(DType::Q8_0, 33), Error);
  EXPECT_EQ(parse_dtype("bf16"), DType::BF16);
  EXPECT_THROW(parse_dtype("f64"), Error);
}

TEST(DType, F16ToF32MatchesHardwareForEveryValue) {
  if (!have_f16c()) GTEST_SKIP() << "no F16C on this CPU";
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    const float ours = f16_to_f32(f16{uint16_t(h)});
    const float hw = hardware_f16_to_f32(uint16_t(h));
    if (std::isnan(hw)) {
      ASSERT_TRUE(std::isnan(ours)) << h;
    } else {
      ASSERT_EQ(std::bit_cast<uint32_t>(ours), std::bit_cast<uint32_t>(hw)) << h;
    }
  }
}

TEST(DType, F32ToF16RoundsToNearestEvenLikeHardware) {
  if (!have_f16c()) GTEST_SKIP() << "no F16C on this CPU";
  std::mt19937 rng(7);
  std::vector<uint32_t> patterns;
  // Every float near each f16 boundary and halfway point, plus random bit patterns.
  for (uint32_t h = 0; h < 0x7c00; ++h) {
    const uint32_t f = std::bit_cast<uint32_t>(f16_to_f32(f16{uint16_t(h)}));
    for (int d = -2; d <= 2; ++d) patterns.push_back(f + uint32_t(d));
    patterns.push_back(f + 0x1000u);  // halfway to the next normal f16
  }
  for (int i = 0; i < 2000000; ++i) patterns.push_back(rng());
  for (uint32_t bits : patterns) {
    for (uint32_t sign : {0u, 0x80000000u}) {
      const float x = std::bit_cast<float>(bits | sign);
      const uint16_t hw = hardware_f32_to_f16(x);
      const uint16_t ours = f32_to_f16(x).bits;
      if (std::isnan(x)) {
        ASSERT_EQ(ours & 0x7c00u, 0x7c00u);
        ASSERT_NE(ours & 0x3ffu, 0u);
      } else {
        ASSERT_EQ(ours, hw) << std::hex << (bits | sign);
      }
    }
  }
}

TEST(DType, Bf16RoundsToNearestEven) {
  auto model = [](uint32_t bits) {  // exact rational rounding on 64-bit integers
    const uint64_t lower = bits & 0xffffu, kept = bits >> 16;
    if (lower > 0x8000u || (lower == 0x8000u && (kept & 1u))) return uint16_t(kept + 1);
    return uint16_t(kept);
  };
  std::mt19937 rng(11);
  for (int i = 0; i < 1000000; ++i) {
    uint32_t bits = rng();
    if (((bits >> 23) & 0xffu) == 0xffu) bits &= ~0x00800000u;  // keep finite for the model
    ASSERT_EQ(f32_to_bf16(std::bit_cast<float>(bits)).bits, model(bits)) << std::hex << bits;
    ASSERT_EQ(std::bit_cast<uint32_t>(bf16_to_f32(bf16{uint16_t(bits >> 16)})), bits & 0xffff0000u);
  }
  EXPECT_TRUE(std::isnan(bf16_to_f32(f32_to_bf16(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_TRUE(std::isinf(bf16_to_f32(f32_to_bf16(std::numeric_limits<float>::infinity()))));
}

TEST(DType, Q8_0RoundTripWithinHalfAStep) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
  std::vector<float> x(32 * 5), y(x.size());
  for (float& v : x) v = dist(rng);
  std::fill(x.begin() + 64, x.begin() + 96, 0.0f);  // an all-zero block must not divide by zero
  std::vector<BlockQ8_0> q(5);
  quantize_row_q8_0(x.data(), q.data(), int64_t(x.size()));
  dequantize_row_q8_0(q.data(), y.data(), int64_t(x.size()));
  for (size_t b = 0; b < 5; ++b) {
    float amax = 0;
    for (size_t i = 0; i < 32; ++i) amax = std::max(amax, std::fabs(x[b * 32 + i]));
    const float d = f16_to_f32(q[b].d);
    for (size_t i = 0; i < 32; ++i) {
      ASSERT_LE(std::fabs(x[b * 32 + i] - y[b * 32 + i]), 0.5f * d + amax * 1e-3f) << b << "," << i;
    }
  }
  EXPECT_THROW(quantize_row_q8_0(x.data(), q.data(), 31), Error);
}

}  // namespace
}  // namespace tg
