#pragma once
// ggml's rope_ext parameters decoded from a ROPE node, and the rotation of one pair (YaRN
// included). The reference and the kernels share this so both evaluate the same formula in
// double — an f32 angle at position 4096 is already off by ~2e-4 rad — and differ only in how
// they apply the rotation to rows.
#include <cstdint>

#include "tilegraph/core/tensor.h"

namespace tg {

struct RopeYarn {
  int64_t n_dims;
  bool neox;
  double freq_base, freq_scale, ext_factor, attn_factor;
  double corr_low, corr_high;  // pairs below low extrapolate, above high interpolate

  static RopeYarn from_node(const Tensor& node);
  // base^(-2i/n_dims) / factor: pair i's angle per position.
  double inverse_frequency(int64_t pair, double factor) const;
  // cos and sin of pair i's angle, times the magnitude scale, for an angle theta_extrap =
  // position * inverse_frequency (before interpolation).
  void rotation(int64_t pair, double theta_extrap, double* cos_out, double* sin_out) const;

  bool operator==(const RopeYarn&) const = default;
};

}  // namespace tg
