#include "rope_cache.h"

#include <cstring>

namespace tg::cpu {

// Angles are evaluated in double, as the reference does: at large positions an f32 angle would be
// off by more than the whole error budget.
void rope_tables(const RopeYarn& c, int32_t pos, const double* inv_freq, float* cos_out, float* sin_out) {
  for (int64_t i = 0; i < c.n_dims / 2; ++i) {
    double cos_wide, sin_wide;
    c.rotation(i, pos * inv_freq[i], &cos_wide, &sin_wide);
    const auto cos_theta = float(cos_wide);
    const auto sin_theta = float(sin_wide);
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

const double* RopeCache::inverse_frequencies(const RopeYarn& c, const Tensor* freq_factors) {
  const auto half = size_t(c.n_dims / 2);
  const size_t count = freq_factors ? half : 0;
  bool same = have_params_ && params_ == c && factors_.size() == count;
  factors_.resize(count);
  for (size_t i = 0; i < count; ++i) {
    float f;
    std::memcpy(&f, static_cast<const char*>(freq_factors->data) + i * freq_factors->nb[0], sizeof f);
    // By their bits, so a NaN factor matches itself and -0 does not match 0.
    same = same && std::memcmp(&f, &factors_[i], sizeof f) == 0;
    factors_[i] = f;
  }
  if (same) return inv_freq_.data();
  params_ = c;
  inv_freq_.resize(half);
  for (size_t i = 0; i < half; ++i) inv_freq_[i] = c.inverse_frequency(int64_t(i), count ? double(factors_[i]) : 1.0);
  have_params_ = true;
  have_tables_ = false;
  return inv_freq_.data();
}

RopeCache::Tables RopeCache::tables(int32_t pos) {
  if (!have_tables_ || tables_pos_ != pos) {
    cos_.resize(size_t(params_.n_dims));
    sin_.resize(size_t(params_.n_dims));
    rope_tables(params_, pos, inv_freq_.data(), cos_.data(), sin_.data());
    tables_pos_ = pos;
    have_tables_ = true;
  }
  return {cos_.data(), sin_.data()};
}

}  // namespace tg::cpu
