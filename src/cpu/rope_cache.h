#pragma once
// The per-pair frequencies and the cos/sin tables of one position, kept between ROPE nodes. A
// decode step rotates Q and K of every layer at the same position with the same parameters: the
// first ROPE computes them (a pow, and a cos and a sin in double, per pair) and the others find
// them here. Each ExecContext has its own, used only by the thread that runs its kernels between
// regions, so it needs no lock; after the first step it allocates nothing.
#include <cstdint>
#include <vector>

#include "tilegraph/core/rope.h"
#include "tilegraph/core/tensor.h"

namespace tg::cpu {

class RopeCache {
 public:
  // base^(-2i/n_dims) / factor_i for the n_dims / 2 pairs of `c`, with the factors of
  // `freq_factors` (null: all 1). Valid until the next call.
  const double* inverse_frequencies(const RopeYarn& c, const Tensor* freq_factors);

  // The rotation of every pair at `pos` under the parameters of the last inverse_frequencies
  // call, laid out as the row primitive for c.neox wants it (vec.h rope_pairs / rope_halves):
  // n_dims entries each. Valid until the next call of either function.
  struct Tables {
    const float* cos;
    const float* sin;
  };
  Tables tables(int32_t pos);

 private:
  RopeYarn params_{};
  std::vector<float> factors_;  // the last call's frequency factors (none without a tensor)
  std::vector<double> inv_freq_;
  bool have_params_ = false;
  bool have_tables_ = false;
  int32_t tables_pos_ = 0;
  std::vector<float> cos_, sin_;
};

// The tables of `pos` into cos_out / sin_out (n_dims floats each), for callers that compute them
// per position themselves (several positions in one node).
void rope_tables(const RopeYarn& c, int32_t pos, const double* inv_freq, float* cos_out, float* sin_out);

}  // namespace tg::cpu
