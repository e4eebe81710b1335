// soft_max with scale, optional mask and ALiBi slopes.
#include <cmath>
#include <limits>

#include "kernels.h"
#include "row_io.h"
#include "tilegraph/core/reference.h"

namespace tg::cpu {

namespace {

void softmax_row(const VecKernels& vec, int64_t n, float* y) {
  const float max = vec.max(n, y);
  if (max == -std::numeric_limits<float>::infinity()) {
    // Fully masked: all zeros rather than NaN, as the reference does.
    for (int64_t i = 0; i < n; ++i) y[i] = 0.0f;
    return;
  }
  const float sum = vec.exp_sum(n, y, y, max);
  vec.scale(n, y, y, 1.0f / sum, 0.0f);
}

}  // namespace

void run_soft_max(const Tensor& node, ExecContext& exec) {
  const Tensor& a = *node.src[0];
  const Tensor* mask = node.src[1];
  const float scale = node.param_f32(0);
  const float max_bias = node.param_f32(1);
  const VecKernels& vec = exec.vec();
  const int64_t n = a.ne[0];
  exec.parallel_range(node.nrows(), 4 * n, [&](const ThreadContext& tc, int64_t begin, int64_t end) {
    float* in_buf = tc.scratch.floats(size_t(3 * n));
    float* out_buf = in_buf + n;
    float* mask_buf = out_buf + n;
    for_each_row(node, begin, end, [&](int64_t i1, int64_t i2, int64_t i3) {
      const float* x = read_row_f32(vec, a, i1, i2, i3, in_buf);
      float* out = output_row_f32(node, i1, i2, i3, out_buf);
      vec.scale(n, out, x, scale, 0.0f);
      if (mask) {
        // The head is dimension 2, as in ggml's soft_max.
        const float slope = reference::alibi_slope(max_bias, a.ne[2], i2);
        const float* m = read_row_f32(vec, *mask, i1, i2 % mask->ne[2], i3 % mask->ne[3], mask_buf);
        vec.axpy_f32(n, out, slope, m);
      }
      softmax_row(vec, n, out);
      finish_row_f32(vec, node, i1, i2, i3, out);
    });
  });
}

}  // namespace tg::cpu
