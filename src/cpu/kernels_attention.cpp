// flash_attn_ext: attention with an online softmax over blocks of keys, never forming the full
// score matrix.
#include <algorithm>
#include <cmath>
#include <limits>

#include "cpu/kernels.h"
#include "tilegraph/core/reference.h"
#include "cpu/row_io.h"

namespace tg::cpu {

namespace {

// Keys scored per step: the running max and the accumulator are rescaled at most once per block
// rather than once per key.
constexpr int64_t kKeyBlock = 64;
// Query heads processed together against one KV head (see run_flash_attn_ext).
constexpr int64_t kMaxGroup = 8;

// A block of K or V rows as the row primitives take them: in place when the elements are
// contiguous, else converted to f32 into a buffer.
struct RowBlock {
  DType type;
  const void* rows;
  size_t stride;
};

RowBlock row_block(const VecKernels& vec, const Tensor& t, int64_t j0, int64_t count, int64_t h,
                   int64_t b, float* buf) {
  if (t.nb[0] == dtype_traits(t.type).type_size) return {t.type, row_ptr(t, j0, h, b), t.nb[1]};
  const int64_t n = t.ne[0];
  for (int64_t j = 0; j < count; ++j)
    load_f32(vec, t.type, row_ptr(t, j0 + j, h, b), t.nb[0], n, buf + j * n);
  return {DType::F32, buf, size_t(n) * sizeof(float)};
}

}  // namespace

void run_flash_attn_ext(const Tensor& node, ExecContext& exec) {
  const Tensor& q = *node.src[0];
  const Tensor& k = *node.src[1];
  const Tensor& v = *node.src[2];
  const Tensor* mask = node.src[3];
  const float scale = node.param_f32(0);
  const float max_bias = node.param_f32(1);
  const float softcap = node.param_f32(2);
  const VecKernels& vec = exec.vec();

  const int64_t head_dim = q.ne[0], n_q = q.ne[1], n_head = q.ne[2];
  const int64_t n_kv = k.ne[1], value_dim = v.ne[0];
  const int64_t heads_per_kv = n_head / k.ne[2];
  const int64_t rows = n_q * n_head * q.ne[3];
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();

  // Query heads that share a KV head are processed together, so each K and V row is fetched from
  // memory once per group rather than once per head (grouped-query attention at decode time is
  // bound by exactly that). Groups shrink when there would be fewer of them than threads.
  int64_t group = std::min(heads_per_kv, kMaxGroup);
  while (group > 1 && (heads_per_kv % group != 0 || rows / group < exec.max_threads())) --group;
  const int64_t groups_per_kv = heads_per_kv / group;

  // Items are numbered query-fastest, so consecutive items of a task share K and V.
  const int64_t items = rows / group;
  exec.parallel_range(
      items, group * n_kv * (head_dim + value_dim),
      [&](const ThreadContext& tc, int64_t begin, int64_t end) {
        const int64_t per_head = head_dim + value_dim + kKeyBlock + n_kv;
        float* base = tc.scratch.floats(
            size_t(group * per_head + kKeyBlock * (head_dim + value_dim) + value_dim));
        float* k_buf = base + group * per_head;
        float* v_buf = k_buf + kKeyBlock * head_dim;
        float* out_buf = v_buf + kKeyBlock * value_dim;
        const float* query[kMaxGroup];
        const float* mask_row[kMaxGroup];
        float* acc[kMaxGroup];
        float* scores[kMaxGroup];
        float running_max[kMaxGroup], sum[kMaxGroup], slope[kMaxGroup];

        for (int64_t item = begin; item < end; ++item) {
          const int64_t iq = item % n_q;
          const int64_t kv_group = item / n_q % (n_head / group);
          const int64_t b = item / (n_q * (n_head / group));
          const int64_t kv_head = kv_group / groups_per_kv;
          const int64_t h0 = kv_group * group;
          for (int64_t g = 0; g < group; ++g) {
            float* mine = base + g * per_head;
            const int64_t h = h0 + g;
            query[g] = read_row_f32(vec, q, iq, h, b, mine);
            acc[g] = mine + head_dim;
            scores[g] = acc[g] + value_dim;
            mask_row[g] = mask ? read_row_f32(vec, *mask, iq, h % mask->ne[2], b % mask->ne[3],
                                              scores[g] + kKeyBlock)
                               : nullptr;
            slope[g] = reference::alibi_slope(max_bias, n_head, h);
            running_max[g] = kNegInf;
            sum[g] = 0.0f;
            std::fill(acc[g], acc[g] + value_dim, 0.0f);
          }

          for (int64_t j0 = 0; j0 < n_kv; j0 += kKeyBlock) {
            const int64_t count = std::min(kKeyBlock, n_kv - j0);
            // The block's rows stay in L1 while each head of the group goes over them.
            const RowBlock keys = row_block(vec, k, j0, count, kv_head, b, k_buf);
            for (int64_t g = 0; g < group; ++g) {
              float* s = scores[g];
              vec.dot_rows(keys.type, head_dim, count, keys.rows, keys.stride, query[g], s);
              vec.scale(count, s, s, scale, 0.0f);
              if (softcap > 0.0f) {
                vec.scale(count, s, s, 1.0f / softcap, 0.0f);
                vec.unary(UnaryOp::TANH, count, s, s);
                vec.scale(count, s, s, softcap, 0.0f);
              }
              if (mask_row[g]) vec.axpy_f32(count, s, slope[g], mask_row[g] + j0);
              const float block_max = vec.max(count, s);
              if (block_max == kNegInf) {
                // Every key of the block is masked out for this head: it adds nothing.
                std::fill(s, s + count, 0.0f);
                continue;
              }
              if (block_max > running_max[g]) {
                const float correction = std::exp(running_max[g] - block_max);
                vec.scale(value_dim, acc[g], acc[g], correction, 0.0f);
                sum[g] *= correction;
                running_max[g] = block_max;
              }
              sum[g] += vec.exp_sum(count, s, s, running_max[g]);
            }
            const RowBlock values = row_block(vec, v, j0, count, kv_head, b, v_buf);
            for (int64_t g = 0; g < group; ++g) {
              vec.axpy_rows(values.type, value_dim, count, values.rows, values.stride, scores[g],
                            acc[g]);
            }
          }

          // The output puts heads before queries: [Dv, H, n_q, B]. A row with every key masked
          // out is all zeros, as in the reference.
          for (int64_t g = 0; g < group; ++g) {
            const int64_t h = h0 + g;
            float* out = output_row_f32(node, h, iq, b, out_buf);
            vec.scale(value_dim, out, acc[g], sum[g] > 0.0f ? 1.0f / sum[g] : 0.0f, 0.0f);
            finish_row_f32(vec, node, h, iq, b, out);
          }
        }
      });
}

}  // namespace tg::cpu
