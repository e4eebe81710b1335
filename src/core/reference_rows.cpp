// Ops that reduce along each row: norm, rms_norm, soft_max, sum_rows, argmax.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "reference_internal.h"

namespace tg::reference {

int32_t argmax_row(const float* x, int64_t n) {
  // ops.h asks for the first of equal maxima (ggml's loop picks the last), NaNs skipped.
  int32_t best = 0;
  bool found = false;
  for (int32_t i = 0; i < n; ++i) {
    if (std::isnan(x[i]) || (found && !(x[i] > x[best]))) continue;
    best = i;
    found = true;
  }
  return best;
}

float alibi_slope(float max_bias, int64_t n_head, int64_t head) {
  if (max_bias <= 0.0f) return 1.0f;
  const int64_t n_head_log2 = int64_t(1) << int64_t(std::floor(std::log2(double(n_head))));
  const float m0 = std::pow(2.0f, -max_bias / float(n_head_log2));
  const float m1 = std::pow(2.0f, -(max_bias / 2.0f) / float(n_head_log2));
  return head < n_head_log2 ? std::pow(m0, float(head + 1)) : std::pow(m1, float(2 * (head - n_head_log2) + 1));
}

namespace detail {

void softmax_in_place(std::span<double> scores) {
  double max = -std::numeric_limits<double>::infinity();
  for (double s : scores) max = std::max(max, s);
  if (max == -std::numeric_limits<double>::infinity()) {
    std::ranges::fill(scores, 0.0);
    return;
  }
  double sum = 0.0;
  for (double& s : scores) {
    s = std::exp(s - max);
    sum += s;
  }
  for (double& s : scores) s /= sum;
}

void norm(const Tensor& node) {
  const Tensor& a = *node.src[0];
  const double eps = node.param_f32(0);
  const int64_t n = a.ne[0];
  std::vector<float> row(static_cast<size_t>(n));
  for_each_row(node, [&](int64_t i1, int64_t i2, int64_t i3) {
    read_row(a, i1, i2, i3, row.data());
    double sum = 0.0;
    for (float x : row) sum += x;
    const double mean = sum / double(n);
    double squares = 0.0;
    for (float x : row) squares += (x - mean) * (x - mean);
    const double inv_std = 1.0 / std::sqrt(squares / double(n) + eps);
    for (float& x : row) x = float((x - mean) * inv_std);
    write_row(node, i1, i2, i3, row.data());
  });
}

void rms_norm(const Tensor& node) {
  const Tensor& a = *node.src[0];
  const double eps = node.param_f32(0);
  const int64_t n = a.ne[0];
  std::vector<float> row(static_cast<size_t>(n));
  for_each_row(node, [&](int64_t i1, int64_t i2, int64_t i3) {
    read_row(a, i1, i2, i3, row.data());
    double squares = 0.0;
    for (float x : row) squares += double(x) * x;
    const double inv_rms = 1.0 / std::sqrt(squares / double(n) + eps);
    for (float& x : row) x = float(x * inv_rms);
    write_row(node, i1, i2, i3, row.data());
  });
}

void soft_max(const Tensor& node) {
  const Tensor& a = *node.src[0];
  const Tensor* mask = node.src[1];
  const double scale = node.param_f32(0);
  const float max_bias = node.param_f32(1);
  const int64_t n = a.ne[0];
  std::vector<float> row(static_cast<size_t>(n));
  std::vector<float> mask_row(static_cast<size_t>(n));
  std::vector<float> out(static_cast<size_t>(n));
  std::vector<double> scores(static_cast<size_t>(n));
  for_each_row(node, [&](int64_t i1, int64_t i2, int64_t i3) {
    read_row(a, i1, i2, i3, row.data());
    // The head is dimension 2, as in ggml's soft_max.
    const double slope = alibi_slope(max_bias, a.ne[2], i2);
    if (mask) read_row(*mask, i1, i2 % mask->ne[2], i3 % mask->ne[3], mask_row.data());
    for (int64_t i = 0; i < n; ++i) {
      scores[i] = row[i] * scale + (mask ? slope * mask_row[i] : 0.0);
    }
    softmax_in_place(scores);
    for (int64_t i = 0; i < n; ++i) out[i] = float(scores[i]);
    write_row(node, i1, i2, i3, out.data());
  });
}

void sum_rows(const Tensor& node) {
  const Tensor& a = *node.src[0];
  std::vector<float> row(size_t(a.ne[0]));
  for_each_row(node, [&](int64_t i1, int64_t i2, int64_t i3) {
    read_row(a, i1, i2, i3, row.data());
    double sum = 0.0;
    for (float x : row) sum += x;
    const float total = float(sum);
    write_row(node, i1, i2, i3, &total);
  });
}

void argmax(const Tensor& node) {
  const Tensor& a = *node.src[0];
  std::vector<float> row(size_t(a.ne[0]));
  for (int64_t i1 = 0; i1 < a.ne[1]; ++i1) {
    read_row(a, i1, 0, 0, row.data());
    const int32_t best = argmax_row(row.data(), a.ne[0]);
    std::memcpy(node.element_ptr(i1, 0, 0, 0), &best, sizeof best);
  }
}

}  // namespace detail

}  // namespace tg::reference
