// Image ops over [W, H, C, N] tensors: conv_2d (direct), pool_2d and batch_norm.
#include <algorithm>
#include <cmath>

#include "kernels.h"
#include "row_io.h"
#include "tilegraph/core/reference.h"

namespace tg::cpu {

namespace {

// t as contiguous f32 in logical order: t's own memory when it already is, else a copy in `buf`.
const float* contiguous_f32(const VecKernels& vec, const Tensor& t, float* buf) {
  if (t.type == DType::F32 && t.is_contiguous()) return static_cast<const float*>(t.data);
  float* out = buf;
  for (int64_t i3 = 0; i3 < t.ne[3]; ++i3) {
    for (int64_t i2 = 0; i2 < t.ne[2]; ++i2) {
      for (int64_t i1 = 0; i1 < t.ne[1]; ++i1, out += t.ne[0]) {
        load_f32(vec, t.type, row_ptr(t, i1, i2, i3), t.nb[0], t.ne[0], out);
      }
    }
  }
  return buf;
}

size_t floats_needed(const Tensor& t) { return t.type == DType::F32 && t.is_contiguous() ? 0 : size_t(t.nelements()); }

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

void run_conv_2d(const Tensor& node, ExecContext& exec) {
  const Tensor& kernel = *node.src[0];
  const Tensor& input = *node.src[1];
  const int32_t s0 = node.op_params[0], s1 = node.op_params[1];
  const int32_t p0 = node.op_params[2], p1 = node.op_params[3];
  const int32_t d0 = node.op_params[4], d1 = node.op_params[5];
  const int64_t kw = kernel.ne[0], kh = kernel.ne[1], channels_in = kernel.ne[2];
  const int64_t width = input.ne[0], height = input.ne[1], out_width = node.ne[0];
  const VecKernels& vec = exec.vec();

  const size_t kernel_floats = floats_needed(kernel);
  auto* shared = static_cast<float*>(exec.shared_scratch((kernel_floats + floats_needed(input)) * sizeof(float)));
  const float* k = contiguous_f32(vec, kernel, shared);                 // [KW, KH, Cin, Cout]
  const float* x = contiguous_f32(vec, input, shared + kernel_floats);  // [W, H, Cin, N]

  exec.parallel_range(
      node.nrows(), out_width * channels_in * kh * kw, [&](const ThreadContext& tc, int64_t begin, int64_t end) {
        float* buf = tc.scratch.floats(size_t(out_width));
        for_each_row(node, begin, end, [&](int64_t oy, int64_t co, int64_t n) {
          float* out = output_row_f32(node, oy, co, n, buf);
          std::fill(out, out + out_width, 0.0f);
          for (int64_t ci = 0; ci < channels_in; ++ci) {
            for (int64_t ky = 0; ky < kh; ++ky) {
              const int64_t iy = oy * s1 - p1 + ky * d1;
              if (iy < 0 || iy >= height) continue;  // zero padding
              const float* in_row = x + ((n * channels_in + ci) * height + iy) * width;
              const float* weights = k + ((co * channels_in + ci) * kh + ky) * kw;
              for (int64_t kx = 0; kx < kw; ++kx) {
                // Output column ox reads input column ox * s0 + offset; keep those inside the row.
                const int64_t offset = kx * d0 - p0;
                const int64_t lo = offset < 0 ? ceil_div(-offset, s0) : 0;
                const int64_t hi = std::min(out_width, width - offset <= 0 ? 0 : ceil_div(width - offset, s0));
                if (lo >= hi) continue;
                if (s0 == 1) {
                  vec.axpy_f32(hi - lo, out + lo, weights[kx], in_row + lo + offset);
                } else {
                  for (int64_t ox = lo; ox < hi; ++ox) out[ox] += weights[kx] * in_row[ox * s0 + offset];
                }
              }
            }
          }
          finish_row_f32(vec, node, oy, co, n, out);
        });
      });
}

void run_pool_2d(const Tensor& node, ExecContext& exec) {
  const Tensor& a = *node.src[0];
  const int64_t k0 = node.op_params[1], k1 = node.op_params[2];
  const int64_t width = a.ne[0], height = a.ne[1], out_width = node.ne[0];
  const VecKernels& vec = exec.vec();
  const float* x = contiguous_f32(vec, a, static_cast<float*>(exec.shared_scratch(floats_needed(a) * sizeof(float))));

  exec.parallel_range(node.nrows(), out_width * k0 * k1, [&](const ThreadContext& tc, int64_t begin, int64_t end) {
    float* buf = tc.scratch.floats(size_t(out_width));
    for_each_row(node, begin, end, [&](int64_t oy, int64_t c, int64_t n) {
      float* out = output_row_f32(node, oy, c, n, buf);
      reference::pool_2d_row(node, x + (n * a.ne[2] + c) * height * width, width, height, oy, out);
      finish_row_f32(vec, node, oy, c, n, out);
    });
  });
}

void run_batch_norm(const Tensor& node, ExecContext& exec) {
  const Tensor& x = *node.src[0];
  const float eps = node.param_f32(0);
  const int axis = node.op_params[1];
  const VecKernels& vec = exec.vec();
  const int64_t channels = x.ne[axis], n = x.ne[0];

  // Per-channel mean, standard deviation, gamma, beta, gathered once.
  auto* params = static_cast<float*>(exec.shared_scratch(size_t(4 * channels) * sizeof(float)));
  float* mean = params;
  float* stddev = mean + channels;
  float* gamma = node.src[3] ? stddev + channels : nullptr;
  float* beta = node.src[4] ? stddev + 2 * channels : nullptr;
  auto gather = [&](const Tensor& t, float* dst) {
    load_f32(vec, t.type, static_cast<const char*>(t.data), t.nb[0], channels, dst);
  };
  gather(*node.src[1], mean);
  gather(*node.src[2], stddev);
  for (int64_t c = 0; c < channels; ++c) stddev[c] = std::sqrt(stddev[c] + eps);
  if (gamma) gather(*node.src[3], gamma);
  if (beta) gather(*node.src[4], beta);

  // The reference's (x - mean) / sqrt(var + eps) * gamma + beta, one operation per pass, so the
  // results match it exactly.
  exec.parallel_range(node.nrows(), 4 * n, [&](const ThreadContext& tc, int64_t begin, int64_t end) {
    float* in_buf = tc.scratch.floats(size_t(2 * n));
    float* out_buf = in_buf + n;
    for_each_row(node, begin, end, [&](int64_t i1, int64_t i2, int64_t i3) {
      const float* in = read_row_f32(vec, x, i1, i2, i3, in_buf);
      float* out = output_row_f32(node, i1, i2, i3, out_buf);
      if (axis == 0) {
        vec.binary(BinaryOp::SUB, n, out, in, mean);
        vec.binary(BinaryOp::DIV, n, out, out, stddev);
        if (gamma) vec.binary(BinaryOp::MUL, n, out, out, gamma);
        if (beta) vec.binary(BinaryOp::ADD, n, out, out, beta);
      } else {
        const int64_t index[kMaxDims] = {0, i1, i2, i3};
        const int64_t c = index[axis];
        vec.binary_scalar(BinaryOp::SUB, n, out, in, mean[c]);
        vec.binary_scalar(BinaryOp::DIV, n, out, out, stddev[c]);
        if (gamma) vec.binary_scalar(BinaryOp::MUL, n, out, out, gamma[c]);
        if (beta) vec.binary_scalar(BinaryOp::ADD, n, out, out, beta[c]);
      }
      finish_row_f32(vec, node, i1, i2, i3, out);
    });
  });
}

}  // namespace tg::cpu
