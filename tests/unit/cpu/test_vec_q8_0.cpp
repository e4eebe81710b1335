// dot_q8_0_rows, the q8_0 matrix-vector primitive, on every ISA this machine can run: against a
// double-precision dot product of the dequantised rows, and for the property graph replay relies
// on — an output does not depend on which other rows and tokens share its call.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "common/tensor_utils.h"
#include "cpu/vec.h"

namespace tg::cpu {
namespace {

// `count` random q8_0 rows of n elements, padded one block apart, and their exact values.
struct Q8Rows {
  int64_t n, count;
  size_t stride;
  std::vector<char> bytes;
  std::vector<double> values;  // count x n, d * q

  Q8Rows(int64_t n_, int64_t count_, test::Rng& rng)
      : n(n_), count(count_), stride(size_t(n_ / kQ8_0BlockSize + 1) * sizeof(BlockQ8_0)) {
    bytes.assign(size_t(count) * stride, 0);
    values.resize(size_t(count * n));
    std::uniform_real_distribution<float> scale(1e-3f, 2.0f);
    std::uniform_int_distribution<int> quant(-128, 127);
    for (int64_t j = 0; j < count; ++j) {
      for (int64_t b = 0; b < n / kQ8_0BlockSize; ++b) {
        BlockQ8_0 block;
        // Mostly normal scales, some f16 subnormals (6e-8 is the smallest).
        block.d = f32_to_f16(b % 7 == 3 ? 3e-6f : scale(rng));
        for (int8_t& q : block.qs) q = int8_t(quant(rng));
        std::memcpy(bytes.data() + size_t(j) * stride + size_t(b) * sizeof(BlockQ8_0), &block,
                    sizeof block);
        for (int i = 0; i < kQ8_0BlockSize; ++i) {
          values[size_t(j * n + b * kQ8_0BlockSize + i)] =
              double(f16_to_f32(block.d)) * double(block.qs[i]);
        }
      }
    }
  }
};

// Every output of dot_q8_0_rows(n, count, ..., tokens, ...) for each count in `counts`.
void expect_matches_reference(int64_t n, const std::vector<int64_t>& counts,
                              const std::vector<int64_t>& token_counts, test::Rng& rng) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  const Q8Rows a(n, counts.back(), rng);
  const int64_t x_stride = n + 5;  // activation rows padded apart
  std::vector<float> x(size_t(token_counts.back() * x_stride));
  for (float& v : x) v = dist(rng);
  for (Isa isa : runnable_isas()) {
    const VecKernels& vec = vec_kernels(isa);
    for (int64_t count : counts) {
      for (int64_t tokens : token_counts) {
        const int64_t out_stride = count + 3;  // the padding must stay untouched
        std::vector<float> out(size_t(tokens * out_stride), -7.0f);
        vec.dot_q8_0_rows(n, count, a.bytes.data(), a.stride, tokens, x.data(), x_stride,
                          out.data(), out_stride);
        for (int64_t t = 0; t < tokens; ++t) {
          for (int64_t j = 0; j < out_stride; ++j) {
            const float got = out[size_t(t * out_stride + j)];
            if (j >= count) {
              ASSERT_EQ(got, -7.0f) << isa_name(isa) << " wrote past row " << count;
              continue;
            }
            double want = 0.0, magnitude = 0.0;
            for (int64_t i = 0; i < n; ++i) {
              const double term = a.values[size_t(j * n + i)] * x[size_t(t * x_stride + i)];
              want += term;
              magnitude += std::abs(term);
            }
            // f32 accumulation of n products of exact f32 weights: at most n roundings.
            ASSERT_NEAR(got, want, double(n) * 0x1p-24 * magnitude)
                << isa_name(isa) << " n=" << n << " count=" << count << " tokens=" << tokens
                << " row " << j << " token " << t;
          }
        }
      }
    }
  }
}

TEST(VecQ8_0, DotRowsMatchesDoubleReferenceOnEveryIsa) {
  test::Rng rng(21);
  for (int64_t n : {32, 64, 3 * 32, 5 * 32, 7 * 32, 13 * 32, 31 * 32, 4096}) {
    expect_matches_reference(n, {1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 2, 3, 5, 9}, rng);
  }
  // Enough rows of 4096 for several of the 256 KiB panels the rows are walked in.
  expect_matches_reference(4096, {131}, {1, 5}, rng);
}

TEST(VecQ8_0, DotRowsOutputsDoNotDependOnTheirNeighbours) {
  test::Rng rng(22);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  const int64_t n = 29 * 32, rows = 9, tokens = 7;
  const Q8Rows a(n, rows, rng);
  std::vector<float> x(size_t(tokens * n));
  for (float& v : x) v = dist(rng);
  for (Isa isa : runnable_isas()) {
    const VecKernels& vec = vec_kernels(isa);
    std::vector<float> together(size_t(tokens * rows));
    vec.dot_q8_0_rows(n, rows, a.bytes.data(), a.stride, tokens, x.data(), n, together.data(),
                      rows);
    for (int64_t j = 0; j < rows; ++j) {
      for (int64_t t = 0; t < tokens; ++t) {
        float alone = 0.0f;
        vec.dot_q8_0_rows(n, 1, a.bytes.data() + size_t(j) * a.stride, a.stride, 1,
                          x.data() + t * n, n, &alone, 1);
        ASSERT_EQ(together[size_t(t * rows + j)], alone)
            << isa_name(isa) << " row " << j << " token " << t;
      }
    }
  }
}

}  // namespace
}  // namespace tg::cpu
