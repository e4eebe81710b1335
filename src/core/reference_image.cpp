// Image ops over [W, H, C, N] tensors: pool_2d and batch_norm.
#include <cfloat>
#include <cmath>
#include <vector>

#include "reference_internal.h"

namespace tg::reference {

void pool_2d_row(const Tensor& node, const float* plane, int64_t width, int64_t height, int64_t oy, float* out) {
  const auto op = PoolOp(node.op_params[0]);
  const int32_t k0 = node.op_params[1], k1 = node.op_params[2];
  const int32_t s0 = node.op_params[3], s1 = node.op_params[4];
  const int32_t p0 = node.op_params[5], p1 = node.op_params[6];
  for (int64_t ox = 0; ox < node.ne[0]; ++ox) {
    // ggml starts MAX at -FLT_MAX, so a window entirely in padding yields -FLT_MAX.
    float max = -FLT_MAX;
    double sum = 0.0;
    for (int64_t ky = 0; ky < k1; ++ky) {
      const int64_t iy = oy * s1 - p1 + ky;
      if (iy < 0 || iy >= height) continue;
      for (int64_t kx = 0; kx < k0; ++kx) {
        const int64_t ix = ox * s0 - p0 + kx;
        if (ix < 0 || ix >= width) continue;
        const float v = plane[iy * width + ix];
        max = std::fmax(max, v);
        sum += v;
      }
    }
    // AVG divides by the full window: padding counts as zeros.
    out[ox] = op == PoolOp::MAX ? max : float(sum / (double(k0) * k1));
  }
}

namespace detail {

void pool_2d(const Tensor& node) {
  const Tensor& a = *node.src[0];
  const int64_t width = a.ne[0], height = a.ne[1];
  const std::vector<float> x = read_all(a);
  std::vector<float> out(size_t(node.ne[0]));
  for_each_row(node, [&](int64_t oy, int64_t c, int64_t n) {
    pool_2d_row(node, x.data() + (n * a.ne[2] + c) * height * width, width, height, oy, out.data());
    write_row(node, oy, c, n, out.data());
  });
}

void batch_norm(const Tensor& node) {
  const Tensor& x = *node.src[0];
  const float eps = node.param_f32(0);
  const int axis = node.op_params[1];
  const std::vector<float> mean = read_all(*node.src[1]);
  const std::vector<float> var = read_all(*node.src[2]);
  const std::vector<float> gamma = node.src[3] ? read_all(*node.src[3]) : std::vector<float>();
  const std::vector<float> beta = node.src[4] ? read_all(*node.src[4]) : std::vector<float>();
  std::vector<float> row(size_t(x.ne[0]));
  for_each_row(node, [&](int64_t i1, int64_t i2, int64_t i3) {
    read_row(x, i1, i2, i3, row.data());
    for (int64_t i0 = 0; i0 < x.ne[0]; ++i0) {
      const int64_t index[kMaxDims] = {i0, i1, i2, i3};
      const size_t c = size_t(index[axis]);
      float y = (row[i0] - mean[c]) / std::sqrt(var[c] + eps);
      if (!gamma.empty()) y *= gamma[c];
      if (!beta.empty()) y += beta[c];
      row[i0] = y;
    }
    write_row(node, i1, i2, i3, row.data());
  });
}

}  // namespace detail

}  // namespace tg::reference
