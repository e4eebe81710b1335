// dot_rows, the primitive behind attention scores: on every ISA this machine runs, each row's
// sum has the bits of one exact model — an FMA chain per lane over whole vectors, then the
// lanes added pairwise (i and i + W/2, then i + W/4, ...) — whether the row went through the
// W-row group with its transposed reduction or through the four-row group. Row lengths are
// whole vectors (the scalar tail is contracted or not at the compiler's choice); row counts put
// rows in both groups and leave a remainder.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "tilegraph/core/dtype.h"
#include "vec.h"

namespace tg::cpu {
namespace {

int lanes(Isa isa) { return isa >= Isa::AVX512 ? 16 : isa == Isa::AVX2 ? 8 : 1; }

float model_row(const float* r, const float* x, int64_t n, int w) {
  std::vector<float> acc(size_t(w), 0.0f);
  for (int64_t i = 0; i + w <= n; i += w) {
    for (int l = 0; l < w; ++l) acc[size_t(l)] = std::fma(r[i + l], x[i + l], acc[size_t(l)]);
  }
  for (int h = w / 2; h >= 1; h /= 2) {
    for (int l = 0; l < h; ++l) acc[size_t(l)] = acc[size_t(l)] + acc[size_t(l + h)];
  }
  return acc[0];
}

TEST(VecDotRows, EveryRowInAGroupHasTheBitsOfTheModel) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> value(-2.0f, 2.0f);
  for (Isa isa : runnable_isas()) {
    const int w = lanes(isa);
    for (int64_t n : {16, 32, 64, 128}) {
      for (int64_t count : {1, 4, 15, 16, 17, 20, 35, 64}) {
        for (DType type : {DType::F32, DType::F16}) {
          const size_t stride_elems = size_t(n + 3);  // rows padded apart
          std::vector<float> rows_f32(size_t(count) * stride_elems);
          std::vector<float> x(static_cast<size_t>(n));
          for (float& v : rows_f32) v = value(rng);
          for (float& v : x) v = value(rng);
          std::vector<uint16_t> rows_f16(rows_f32.size());
          for (size_t k = 0; k < rows_f32.size(); ++k) {
            rows_f16[k] = f32_to_f16(rows_f32[k]).bits;
            if (type == DType::F16) rows_f32[k] = f16_to_f32(f16{rows_f16[k]});  // the exact values read
          }
          const void* rows = type == DType::F32 ? static_cast<const void*>(rows_f32.data()) : rows_f16.data();
          const size_t stride = stride_elems * (type == DType::F32 ? 4 : 2);
          std::vector<float> out(static_cast<size_t>(count));
          vec_kernels(isa).dot_rows(type, n, count, rows, stride, x.data(), out.data());
          // The last count % 4 rows take the one-row path, which splits K over four chains.
          for (int64_t j = 0; j < count - count % 4; ++j) {
            const float want = model_row(rows_f32.data() + size_t(j) * stride_elems, x.data(), n, w);
            EXPECT_EQ(std::memcmp(&want, &out[size_t(j)], sizeof want), 0)
                << isa_name(isa) << " " << dtype_name(type) << " n " << n << " count " << count << " row " << j << ": "
                << out[size_t(j)] << " vs model " << want;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace tg::cpu
