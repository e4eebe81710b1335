#include "tilegraph/core/rope.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace tg {

namespace {

// ggml_rope_yarn_corr_dims: the pair index whose wavelength fits n_rot times in n_ctx_orig.
double yarn_corr_dim(int64_t n_dims, int32_t n_ctx_orig, double n_rot, double base) {
  return double(n_dims) * std::log(n_ctx_orig / (n_rot * 2.0 * std::numbers::pi)) / (2.0 * std::log(base));
}

}  // namespace

RopeYarn RopeYarn::from_node(const Tensor& node) {
  RopeYarn c;
  c.n_dims = node.op_params[1];
  c.neox = RopeMode(node.op_params[2]) == RopeMode::NEOX;
  const int32_t n_ctx_orig = node.op_params[4];
  c.freq_base = node.param_f32(5);
  c.freq_scale = node.param_f32(6);
  c.ext_factor = node.param_f32(7);
  c.attn_factor = node.param_f32(8);
  const double beta_fast = node.param_f32(9);
  const double beta_slow = node.param_f32(10);
  c.corr_low = std::max(0.0, std::floor(yarn_corr_dim(c.n_dims, n_ctx_orig, beta_fast, c.freq_base)));
  c.corr_high = std::min(double(c.n_dims - 1), std::ceil(yarn_corr_dim(c.n_dims, n_ctx_orig, beta_slow, c.freq_base)));
  return c;
}

double RopeYarn::inverse_frequency(int64_t pair, double factor) const {
  return std::pow(freq_base, -2.0 * double(pair) / double(n_dims)) / factor;
}

void RopeYarn::rotation(int64_t pair, double theta_extrap, double* cos_out, double* sin_out) const {
  const double theta_interp = freq_scale * theta_extrap;
  double theta = theta_interp;
  double mscale = attn_factor;
  if (ext_factor != 0.0) {
    const double y = (double(pair) - corr_low) / std::max(0.001, corr_high - corr_low);
    const double ramp_mix = (1.0 - std::clamp(y, 0.0, 1.0)) * ext_factor;
    theta = theta_interp * (1.0 - ramp_mix) + theta_extrap * ramp_mix;
    mscale *= 1.0 + 0.1 * std::log(1.0 / freq_scale);
  }
  *cos_out = std::cos(theta) * mscale;
  *sin_out = std::sin(theta) * mscale;
}

}  // namespace tg
