// Rotary position embedding (ggml's rope_ext, YaRN included).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numbers>

#include "cpu/kernels.h"
#include "cpu/row_io.h"

namespace tg::cpu {

namespace {

struct RopeConfig {
  int64_t n_dims;
  bool neox;
  double freq_scale, ext_factor, attn_factor;
  double corr_low, corr_high;  // YaRN: pairs below low extrapolate, above high interpolate
};

// ggml_rope_yarn_corr_dims: the pair index whose wavelength fits n_rot times in n_ctx_orig.
double yarn_corr_dim(int64_t n_dims, int32_t n_ctx_orig, double n_rot, double base) {
  return double(n_dims) * std::log(n_ctx_orig / (n_rot * 2.0 * std::numbers::pi)) /
         (2.0 * std::log(base));
}

RopeConfig rope_config(const Tensor& node) {
  RopeConfig c;
  c.n_dims = node.op_params[1];
  c.neox = RopeMode(node.op_params[2]) == RopeMode::NEOX;
  const int32_t n_ctx_orig = node.op_params[4];
  const double freq_base = node.param_f32(5);
  c.freq_scale = node.param_f32(6);
  c.ext_factor = node.param_f32(7);
  c.attn_factor = node.param_f32(8);
  const double beta_fast = node.param_f32(9);
  const double beta_slow = node.param_f32(10);
  c.corr_low = std::max(0.0, std::floor(yarn_corr_dim(c.n_dims, n_ctx_orig, beta_fast, freq_base)));
  c.corr_high = std::min(double(c.n_dims - 1),
                         std::ceil(yarn_corr_dim(c.n_dims, n_ctx_orig, beta_slow, freq_base)));
  return c;
}

// The rotation of every pair at one position, in the layout the row primitive wants. Angles are
// evaluated in double, as the reference does: at large positions an f32 angle would be off by
// more than the whole error budget.
void rope_tables(const RopeConfig& c, int32_t pos, const double* inv_freq, float* cos_out,
                 float* sin_out) {
  for (int64_t i = 0; i < c.n_dims / 2; ++i) {
    const double theta_extrap = pos * inv_freq[i];
    const double theta_interp = c.freq_scale * theta_extrap;
    double theta = theta_interp;
    double mscale = c.attn_factor;
    if (c.ext_factor != 0.0) {
      const double y = (double(i) - c.corr_low) / std::max(0.001, c.corr_high - c.corr_low);
      const double ramp_mix = (1.0 - std::clamp(y, 0.0, 1.0)) * c.ext_factor;
      theta = theta_interp * (1.0 - ramp_mix) + theta_extrap * ramp_mix;
      mscale *= 1.0 + 0.1 * std::log(1.0 / c.freq_scale);
    }
    const auto cos_theta = float(std::cos(theta) * mscale);
    const auto sin_theta = float(std::sin(theta) * mscale);
    if (c.neox) {
      cos_out[i] = cos_theta;
      sin_out[i] = sin_theta;
    } else {
      cos_out[2 * i] = cos_out[2 * i + 1] = cos_theta;
      sin_out[2 * i] = -sin_theta;
      sin_out[2 * i + 1] = sin_theta;
    }
  }
}

}  // namespace

void run_rope(const Tensor& node, ExecContext& exec) {
  const Tensor& a = *node.src[0];
  const Tensor& pos = *node.src[1];
  const Tensor* freq_factors = node.src[2];
  const RopeConfig c = rope_config(node);
  const VecKernels& vec = exec.vec();
  const int64_t n = a.ne[0], half = c.n_dims / 2;

  // Per-pair frequencies, shared by all positions.
  auto* inv_freq = static_cast<double*>(exec.shared_scratch(size_t(half) * sizeof(double)));
  const double freq_base = node.param_f32(5);
  for (int64_t i = 0; i < half; ++i) {
    double factor = 1.0;
    if (freq_factors) {
      float f;
      std::memcpy(&f, static_cast<const char*>(freq_factors->data) + i * freq_factors->nb[0],
                  sizeof f);
      factor = f;
    }
    inv_freq[i] = std::pow(freq_base, -2.0 * double(i) / double(c.n_dims)) / factor;
  }

  exec.parallel_range(
      node.nrows(), 2 * n, [&](const ThreadContext& tc, int64_t begin, int64_t end) {
        float* in_buf = tc.scratch.floats(size_t(2 * n + 2 * c.n_dims));
        float* out_buf = in_buf + n;
        float* cos_table = out_buf + n;
        float* sin_table = cos_table + c.n_dims;
        int64_t table_token = -1;  // the tables depend on the token (i2) only; rows run i1 fastest
        for_each_row(node, begin, end, [&](int64_t i1, int64_t i2, int64_t i3) {
          if (i2 != table_token) {
            int32_t p;
            std::memcpy(&p, static_cast<const char*>(pos.data) + i2 * pos.nb[0], sizeof p);
            rope_tables(c, p, inv_freq, cos_table, sin_table);
            table_token = i2;
          }
          const float* x = read_row_f32(vec, a, i1, i2, i3, in_buf);
          float* out = output_row_f32(node, i1, i2, i3, out_buf);
          if (c.neox) {
            vec.rope_halves(c.n_dims, out, x, cos_table, sin_table);
          } else {
            vec.rope_pairs(c.n_dims, out, x, cos_table, sin_table);
          }
          if (out != x)
            std::memmove(out + c.n_dims, x + c.n_dims, size_t(n - c.n_dims) * sizeof(float));
          finish_row_f32(vec, node, i1, i2, i3, out);
        });
      });
}

}  // namespace tg::cpu
