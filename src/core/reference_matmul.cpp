// Contractions: mul_mat and conv_2d (direct convolution).
#include <vector>

#include "reference_internal.h"
#include "tilegraph/core/quant.h"

namespace tg::reference::detail {

void mul_mat(const Tensor& node) {
  const Tensor& a = *node.src[0];
  const Tensor& b = *node.src[1];
  const int64_t k_len = a.ne[0], m_len = a.ne[1], n_len = b.ne[1];
  const int64_t ratio2 = b.ne[2] / a.ne[2], ratio3 = b.ne[3] / a.ne[3];
  std::vector<float> a_rows(size_t(m_len * k_len));
  std::vector<float> b_row(static_cast<size_t>(k_len));
  std::vector<float> out(static_cast<size_t>(m_len));
  for (int64_t i3 = 0; i3 < b.ne[3]; ++i3) {
    for (int64_t i2 = 0; i2 < b.ne[2]; ++i2) {
      // a is broadcast over b's batch dims: consecutive b batches share one a matrix.
      for (int64_t m = 0; m < m_len; ++m) {
        read_row(a, m, i2 / ratio2, i3 / ratio3, a_rows.data() + m * k_len);
      }
      for (int64_t n = 0; n < n_len; ++n) {
        read_row(b, n, i2, i3, b_row.data());
        round_activations(a.type, b_row.data(), k_len);
        for (int64_t m = 0; m < m_len; ++m) {
          const float* a_row = a_rows.data() + m * k_len;
          double dot = 0.0;
          for (int64_t k = 0; k < k_len; ++k) dot += double(a_row[k]) * b_row[k];
          out[m] = float(dot);
        }
        write_row(node, n, i2, i3, out.data());
      }
    }
  }
}

void conv_2d(const Tensor& node) {
  const Tensor& kernel = *node.src[0];
  const Tensor& input = *node.src[1];
  const int32_t s0 = node.op_params[0], s1 = node.op_params[1];
  const int32_t p0 = node.op_params[2], p1 = node.op_params[3];
  const int32_t d0 = node.op_params[4], d1 = node.op_params[5];
  const int64_t kw = kernel.ne[0], kh = kernel.ne[1], channels_in = kernel.ne[2];
  const int64_t width = input.ne[0], height = input.ne[1];
  const std::vector<float> k = read_all(kernel);  // [KW, KH, Cin, Cout]
  const std::vector<float> x = read_all(input);   // [W, H, Cin, N]
  std::vector<float> out(size_t(node.ne[0]));
  for_each_row(node, [&](int64_t oy, int64_t co, int64_t n) {
    for (int64_t ox = 0; ox < node.ne[0]; ++ox) {
      double sum = 0.0;
      for (int64_t ci = 0; ci < channels_in; ++ci) {
        for (int64_t ky = 0; ky < kh; ++ky) {
          const int64_t iy = oy * s1 - p1 + ky * d1;
          if (iy < 0 || iy >= height) continue;  // zero padding
          for (int64_t kx = 0; kx < kw; ++kx) {
            const int64_t ix = ox * s0 - p0 + kx * d0;
            if (ix < 0 || ix >= width) continue;
            sum += double(k[size_t(((co * channels_in + ci) * kh + ky) * kw + kx)]) *
                   x[size_t(((n * channels_in + ci) * height + iy) * width + ix)];
          }
        }
      }
      out[size_t(ox)] = float(sum);
    }
    write_row(node, oy, co, n, out.data());
  });
}

}  // namespace tg::reference::detail
