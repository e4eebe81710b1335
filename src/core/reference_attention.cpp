// Attention ops: rope (ggml's rope_ext, YaRN included) and flash_attn_ext.
#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

#include "reference_internal.h"
#include "tilegraph/core/rope.h"

namespace tg::reference::detail {

namespace {

// cos and sin (both times the magnitude scale) of every rotated pair at one position.
void rope_angles(const RopeYarn& c, int32_t pos, const std::vector<float>& freq_factors, std::vector<double>& cos_out,
                 std::vector<double>& sin_out) {
  for (int64_t i = 0; i < c.n_dims / 2; ++i) {
    const double factor = freq_factors.empty() ? 1.0 : freq_factors[size_t(i)];
    c.rotation(i, pos * c.inverse_frequency(i, factor), &cos_out[size_t(i)], &sin_out[size_t(i)]);
  }
}

}  // namespace

void rope(const Tensor& node) {
  const Tensor& a = *node.src[0];
  const Tensor& pos = *node.src[1];
  const RopeYarn c = RopeYarn::from_node(node);
  std::vector<float> freq_factors;
  if (node.src[2]) {
    freq_factors = read_all(*node.src[2]);
    freq_factors.resize(size_t(c.n_dims / 2));
  }
  const int64_t half = c.n_dims / 2;
  std::vector<double> cos_theta(static_cast<size_t>(half));
  std::vector<double> sin_theta(static_cast<size_t>(half));
  std::vector<float> row(size_t(a.ne[0]));
  for (int64_t i3 = 0; i3 < a.ne[3]; ++i3) {
    for (int64_t i2 = 0; i2 < a.ne[2]; ++i2) {
      rope_angles(c, read_i32(pos, i2), freq_factors, cos_theta, sin_theta);
      for (int64_t i1 = 0; i1 < a.ne[1]; ++i1) {
        read_row(a, i1, i2, i3, row.data());
        for (int64_t i = 0; i < half; ++i) {
          // NORMAL rotates adjacent pairs; NEOX pairs element i with element i + n_dims/2.
          const int64_t j0 = c.neox ? i : 2 * i;
          const int64_t j1 = c.neox ? i + half : 2 * i + 1;
          const double x0 = row[j0], x1 = row[j1];
          row[j0] = float(x0 * cos_theta[i] - x1 * sin_theta[i]);
          row[j1] = float(x0 * sin_theta[i] + x1 * cos_theta[i]);
        }
        write_row(node, i1, i2, i3, row.data());
      }
    }
  }
}

void flash_attn_ext(const Tensor& node) {
  const Tensor& q = *node.src[0];
  const Tensor& k = *node.src[1];
  const Tensor& v = *node.src[2];
  const Tensor* mask = node.src[3];
  const double scale = node.param_f32(0);
  const float max_bias = node.param_f32(1);
  const double softcap = node.param_f32(2);
  const int64_t head_dim = q.ne[0], n_q = q.ne[1], n_head = q.ne[2], n_batch = q.ne[3];
  const int64_t n_kv = k.ne[1], value_dim = v.ne[0];
  const int64_t heads_per_kv = n_head / k.ne[2];

  std::vector<float> keys(size_t(n_kv * head_dim));
  std::vector<float> values(size_t(n_kv * value_dim));
  std::vector<float> query(static_cast<size_t>(head_dim));
  std::vector<float> mask_row(static_cast<size_t>(n_kv));
  std::vector<float> out(static_cast<size_t>(value_dim));
  std::vector<double> scores(static_cast<size_t>(n_kv));
  for (int64_t b = 0; b < n_batch; ++b) {
    for (int64_t h = 0; h < n_head; ++h) {
      const int64_t kv_head = h / heads_per_kv;
      for (int64_t j = 0; j < n_kv; ++j) {
        read_row(k, j, kv_head, b, keys.data() + j * head_dim);
        read_row(v, j, kv_head, b, values.data() + j * value_dim);
      }
      const double slope = alibi_slope(max_bias, n_head, h);
      for (int64_t iq = 0; iq < n_q; ++iq) {
        read_row(q, iq, h, b, query.data());
        if (mask) read_row(*mask, iq, h % mask->ne[2], b % mask->ne[3], mask_row.data());
        for (int64_t j = 0; j < n_kv; ++j) {
          double dot = 0.0;
          for (int64_t d = 0; d < head_dim; ++d) dot += double(query[d]) * keys[j * head_dim + d];
          double s = dot * scale;
          if (softcap > 0.0) s = softcap * std::tanh(s / softcap);
          if (mask) s += slope * mask_row[j];
          scores[j] = s;
        }
        softmax_in_place(scores);
        for (int64_t d = 0; d < value_dim; ++d) {
          double sum = 0.0;
          for (int64_t j = 0; j < n_kv; ++j) sum += scores[j] * values[j * value_dim + d];
          out[d] = float(sum);
        }
        // The output puts heads before queries: [Dv, H, n_q, B], as ggml does.
        write_row(node, h, iq, b, out.data());
      }
    }
  }
}

}  // namespace tg::reference::detail
