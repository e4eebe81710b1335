// Rotary position embedding (ggml's rope_ext, YaRN included).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numbers>

#include "cpu/kernels.h"
#include "cpu/row_io.h"
#include "tilegraph/core/rope.h"

namespace tg::cpu {

namespace {

// The rotation of every pair at one position, in the layout the row primitive wants. Angles are
// evaluated in double, as the reference does: at large positions an f32 angle would be off by
// more than the whole error budget.
void rope_tables(const RopeYarn& c, int32_t pos, const double* inv_freq, float* cos_out,
                 float* sin_out) {
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

}  // namespace

void run_rope(const Tensor& node, ExecContext& exec) {
  const Tensor& a = *node.src[0];
  const Tensor& pos = *node.src[1];
  const Tensor* freq_factors = node.src[2];
  const RopeYarn c = RopeYarn::from_node(node);
  const VecKernels& vec = exec.vec();
  const int64_t n = a.ne[0], half = c.n_dims / 2;

  // Per-pair frequencies, shared by all positions.
  auto* inv_freq = static_cast<double*>(exec.shared_scratch(size_t(half) * sizeof(double)));
  for (int64_t i = 0; i < half; ++i) {
    double factor = 1.0;
    if (freq_factors) {
      float f;
      std::memcpy(&f, static_cast<const char*>(freq_factors->data) + i * freq_factors->nb[0],
                  sizeof f);
      factor = f;
    }
    inv_freq[i] = c.inverse_frequency(i, factor);
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
