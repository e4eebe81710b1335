#pragma once
// Helpers of the C-model's tests: random operands put in a tile's SPM in a format, results read
// back, the core reference run on f32 copies, and the per-format tolerance every comparison uses.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "common/expect_error.h"
#include "tilegraph/core/context.h"
#include "tilegraph/core/ops.h"
#include "tilegraph/core/reference.h"
#include "tilegraph/sim/chip.h"
#include "tilegraph/sim/format.h"

namespace tg::sim::test {

using Rng = std::mt19937;
using tg::test::expect_error;

inline std::vector<float> random_values(Rng& rng, int64_t n, float lo = -2.0f, float hi = 2.0f) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = dist(rng);
  return v;
}

// Writes `values` rounded to `format` (ints rounded to nearest) at addr and returns the values
// the SPM now holds, as f32.
inline std::vector<float> put(Tile& tile, uint64_t addr, const std::vector<float>& values, Format format) {
  std::vector<uint8_t> bytes(values.size() * format_bytes(format));
  from_f32(format, values.data(), bytes.data(), int64_t(values.size()), RoundMode::NearestEven);
  tile.spm().write(addr, bytes.data(), bytes.size());
  std::vector<float> stored(values.size());
  to_f32(format, bytes.data(), stored.data(), int64_t(values.size()));
  return stored;
}

inline std::vector<float> get(const Tile& tile, uint64_t addr, int64_t n, Format format) {
  std::vector<uint8_t> bytes(static_cast<size_t>(n) * format_bytes(format));
  tile.spm().read(addr, bytes.data(), bytes.size());
  std::vector<float> out(static_cast<size_t>(n));
  to_f32(format, bytes.data(), out.data(), n);
  return out;
}

// Relative tolerance of a result rounded to `format` against the f32 reference rounded the same
// way: two units in the last place of the format (the EVG vector functions are within ~1.5 ulp of
// f32, and a reference value near a rounding boundary may round the other way); exact for ints.
inline double tolerance(Format format) {
  switch (format) {
    case Format::FP32: return 4e-6;
    case Format::TF32: return 2.0 / 1024;
    case Format::FP16: return 2.0 / 1024;
    case Format::BF16: return 2.0 / 128;
    default: return 0;
  }
}

// out must equal round_to(format, ref) within tolerance(format) relative (plus `abs` absolute).
inline void expect_close(const std::vector<float>& out, const std::vector<float>& ref, Format format,
                         const std::string& what, double abs = 1e-6) {
  ASSERT_EQ(out.size(), ref.size()) << what;
  for (size_t i = 0; i < out.size(); ++i) {
    const double r = round_to(format, ref[i]);
    if (std::isnan(r)) {
      ASSERT_TRUE(std::isnan(out[i])) << what << " at " << i;
      continue;
    }
    if (std::isinf(r)) {
      ASSERT_EQ(out[i], r) << what << " at " << i;
      continue;
    }
    ASSERT_NEAR(out[i], r, abs + tolerance(format) * std::fabs(r)) << what << " at " << i << " (ref " << ref[i] << ")";
  }
}

// A 1-D f32 tensor of `values` in ctx.
inline Tensor* tensor_of(Context& ctx, const std::vector<float>& values, std::initializer_list<int64_t> ne) {
  Tensor* t = ctx.new_tensor(DType::F32, ne);
  std::copy(values.begin(), values.end(), static_cast<float*>(t->data));
  return t;
}

// Computes `node` and the ops it depends on with the reference.
inline void reference_compute(Tensor* node) {
  for (int i = 0; i < kMaxSrc; ++i) {
    if (node->src[i] && node->src[i]->op != Op::NONE) reference_compute(node->src[i]);
  }
  reference::compute_node(*node);
}

// The node's f32 data after the reference computed it.
inline std::vector<float> reference_result(Tensor* node) {
  reference_compute(node);
  const float* p = static_cast<const float*>(node->data);
  return std::vector<float>(p, p + node->nelements());
}

}  // namespace tg::sim::test
