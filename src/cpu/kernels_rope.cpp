// Rotary position embedding (ggml's rope_ext, YaRN included).
#include <cstring>

#include "kernels.h"
#include "rope_cache.h"
#include "row_io.h"
#include "tilegraph/core/rope.h"

namespace tg::cpu {

namespace {

int32_t read_position(const Tensor& pos, int64_t token) {
  int32_t p;
  std::memcpy(&p, static_cast<const char*>(pos.data) + token * pos.nb[0], sizeof p);
  return p;
}

}  // namespace

void run_rope(const Tensor& node, ExecContext& exec) {
  const Tensor& a = *node.src[0];
  const Tensor& pos = *node.src[1];
  const Tensor* freq_factors = node.src[2];
  const RopeYarn c = RopeYarn::from_node(node);
  const VecKernels& vec = exec.vec();
  const int64_t n = a.ne[0];

  const double* inv_freq = exec.rope_cache().inverse_frequencies(c, freq_factors);
  // One position (decode): its tables, likely computed by an earlier ROPE of the step already.
  const RopeCache::Tables shared = a.ne[2] == 1 ? exec.rope_cache().tables(read_position(pos, 0)) : RopeCache::Tables{};

  exec.parallel_range(node.nrows(), 2 * n, [&](const ThreadContext& tc, int64_t begin, int64_t end) {
    float* in_buf = tc.scratch.floats(size_t(2 * n + 2 * c.n_dims));
    float* out_buf = in_buf + n;
    const float* cos_table = shared.cos;
    const float* sin_table = shared.sin;
    int64_t table_token = -1;  // the tables depend on the token (i2) only; rows run i1 fastest
    for_each_row(node, begin, end, [&](int64_t i1, int64_t i2, int64_t i3) {
      if (!shared.cos && i2 != table_token) {
        float* own_cos = out_buf + n;
        float* own_sin = own_cos + c.n_dims;
        rope_tables(c, read_position(pos, i2), inv_freq, own_cos, own_sin);
        cos_table = own_cos;
        sin_table = own_sin;
        table_token = i2;
      }
      const float* x = read_row_f32(vec, a, i1, i2, i3, in_buf);
      float* out = output_row_f32(node, i1, i2, i3, out_buf);
      if (c.neox) {
        vec.rope_halves(c.n_dims, out, x, cos_table, sin_table);
      } else {
        vec.rope_pairs(c.n_dims, out, x, cos_table, sin_table);
      }
      if (out != x) std::memmove(out + c.n_dims, x + c.n_dims, size_t(n - c.n_dims) * sizeof(float));
      finish_row_f32(vec, node, i1, i2, i3, out);
    });
  });
}

}  // namespace tg::cpu
