// flash_attn_ext: attention with an online softmax over blocks of keys, never forming the full
// score matrix.
#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels.h"
#include "row_io.h"
#include "tilegraph/core/reference.h"

namespace tg::cpu {

namespace {

// Keys scored per step: the running max and the accumulator are rescaled at most once per block
// rather than once per key.
constexpr int64_t kKeyBlock = 64;
// Query heads processed together against one KV head, and consecutive queries processed
// together (see run_flash_attn_ext).
constexpr int64_t kMaxGroup = 8;
constexpr int64_t kMaxQueryTile = 8;
constexpr int64_t kMaxTileRows = kMaxGroup * kMaxQueryTile;

// A block of K or V rows as the row primitives take them: in place when the elements are
// contiguous and need no conversion, or contiguous and read by few rows of the tile (the row
// primitives convert f16 and bf16 as they go); else converted to f32 into a buffer, once for
// every row of the tile.
struct RowBlock {
  DType type;
  const void* rows;
  size_t stride;
};

// Rows of the tile from which converting a block once beats converting it in every row's pass.
// A KV cache's rows of one head are not adjacent, so converting costs a call per row: with 4
// rows (decode with 4 query heads per KV head) decode at 1000 positions of context ran 20%
// slower than in place, with 2 rows 1.8x slower (bench/RESULTS.md, "flash attention in prefill").
constexpr int64_t kMinRowsToConvert = 8;

RowBlock row_block(const VecKernels& vec, const Tensor& t, int64_t j0, int64_t count, int64_t h, int64_t b,
                   int64_t readers, float* buf) {
  const size_t type_size = dtype_traits(t.type).type_size;
  const bool contiguous = t.nb[0] == type_size;
  if (contiguous && (t.type == DType::F32 || readers < kMinRowsToConvert)) {
    return {t.type, row_ptr(t, j0, h, b), t.nb[1]};
  }
  const int64_t n = t.ne[0];
  if (contiguous && t.nb[1] == size_t(n) * type_size) {
    load_f32(vec, t.type, row_ptr(t, j0, h, b), type_size, count * n, buf);  // the rows are adjacent
  } else {
    for (int64_t j = 0; j < count; ++j) load_f32(vec, t.type, row_ptr(t, j0 + j, h, b), t.nb[0], n, buf + j * n);
  }
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

  // Query heads that share a KV head, and consecutive queries, are processed together, so each
  // block of K and V rows is fetched from memory and converted once per tile of rows rather than
  // once per row (grouped-query attention at decode time is bound by exactly that, prefill by the
  // conversion). Groups and tiles shrink when there would be fewer of them than threads.
  int64_t group = std::min(heads_per_kv, kMaxGroup);
  while (group > 1 && (heads_per_kv % group != 0 || rows / group < exec.max_threads())) --group;
  const int64_t groups_per_kv = heads_per_kv / group;
  int64_t query_tile = std::min(n_q, kMaxQueryTile);
  while (query_tile > 1 && rows / (group * query_tile) < exec.max_threads()) --query_tile;
  const int64_t query_tiles = (n_q + query_tile - 1) / query_tile;
  const int64_t tile_rows = query_tile * group;

  // Items are numbered query-tile-fastest, so consecutive items of a task share K and V.
  const int64_t items = query_tiles * (n_head / group) * q.ne[3];
  exec.parallel_range(
      items, tile_rows * n_kv * (head_dim + value_dim), [&](const ThreadContext& tc, int64_t begin, int64_t end) {
        const int64_t per_row = head_dim + value_dim + kKeyBlock + n_kv;
        float* base = tc.scratch.floats(size_t(tile_rows * per_row + kKeyBlock * (head_dim + value_dim) + value_dim));
        float* k_buf = base + tile_rows * per_row;
        float* v_buf = k_buf + kKeyBlock * head_dim;
        float* out_buf = v_buf + kKeyBlock * value_dim;
        // Row r of a tile is query iq0 + r / group of head h0 + r % group.
        const float* query[kMaxTileRows];
        const float* mask_row[kMaxTileRows];
        float* acc[kMaxTileRows];
        float* scores[kMaxTileRows];
        float running_max[kMaxTileRows], sum[kMaxTileRows], slope[kMaxTileRows];

        for (int64_t item = begin; item < end; ++item) {
          const int64_t iq0 = item % query_tiles * query_tile;
          const int64_t kv_group = item / query_tiles % (n_head / group);
          const int64_t b = item / (query_tiles * (n_head / group));
          const int64_t kv_head = kv_group / groups_per_kv;
          const int64_t h0 = kv_group * group;
          const int64_t n_rows = std::min(query_tile, n_q - iq0) * group;
          for (int64_t r = 0; r < n_rows; ++r) {
            float* mine = base + r * per_row;
            const int64_t iq = iq0 + r / group, h = h0 + r % group;
            query[r] = read_row_f32(vec, q, iq, h, b, mine);
            acc[r] = mine + head_dim;
            scores[r] = acc[r] + value_dim;
            if (!mask) {
              mask_row[r] = nullptr;
            } else if (mask->ne[2] == 1 && r % group != 0) {
              mask_row[r] = mask_row[r - r % group];  // the heads of one query share its mask row
            } else {
              mask_row[r] = read_row_f32(vec, *mask, iq, h % mask->ne[2], b % mask->ne[3], scores[r] + kKeyBlock);
            }
            slope[r] = reference::alibi_slope(max_bias, n_head, h);
            running_max[r] = kNegInf;
            sum[r] = 0.0f;
            std::fill(acc[r], acc[r] + value_dim, 0.0f);
          }

          for (int64_t j0 = 0; j0 < n_kv; j0 += kKeyBlock) {
            const int64_t count = std::min(kKeyBlock, n_kv - j0);
            // A block the mask hides from every row of the tile adds nothing (the keys past a
            // query in causal attention): not even its scores are needed.
            bool hidden = mask != nullptr;
            for (int64_t r = 0; r < n_rows && hidden; ++r) hidden = vec.max(count, mask_row[r] + j0) == kNegInf;
            if (hidden) continue;
            // The block's rows stay in L1 while each row of the tile goes over them.
            const RowBlock keys = row_block(vec, k, j0, count, kv_head, b, n_rows, k_buf);
            for (int64_t r = 0; r < n_rows; ++r) {
              float* s = scores[r];
              vec.dot_rows(keys.type, head_dim, count, keys.rows, keys.stride, query[r], s);
              vec.scale(count, s, s, scale, 0.0f);
              if (softcap > 0.0f) {
                vec.scale(count, s, s, 1.0f / softcap, 0.0f);
                vec.unary(UnaryOp::TANH, count, s, s);
                vec.scale(count, s, s, softcap, 0.0f);
              }
              if (mask_row[r]) vec.axpy_f32(count, s, slope[r], mask_row[r] + j0);
              const float block_max = vec.max(count, s);
              if (block_max == kNegInf) {
                // Every key of the block is masked out for this row: it adds nothing (axpy_rows
                // skips the zero weights).
                std::fill(s, s + count, 0.0f);
                continue;
              }
              if (block_max > running_max[r]) {
                const float correction = std::exp(running_max[r] - block_max);
                vec.scale(value_dim, acc[r], acc[r], correction, 0.0f);
                sum[r] *= correction;
                running_max[r] = block_max;
              }
              sum[r] += vec.exp_sum(count, s, s, running_max[r]);
            }
            const RowBlock values = row_block(vec, v, j0, count, kv_head, b, n_rows, v_buf);
            for (int64_t r = 0; r < n_rows; ++r) {
              vec.axpy_rows(values.type, value_dim, count, values.rows, values.stride, scores[r], acc[r]);
            }
          }

          // The output puts heads before queries: [Dv, H, n_q, B]. A row with every key masked
          // out is all zeros, as in the reference.
          for (int64_t r = 0; r < n_rows; ++r) {
            const int64_t iq = iq0 + r / group, h = h0 + r % group;
            float* out = output_row_f32(node, h, iq, b, out_buf);
            vec.scale(value_dim, out, acc[r], sum[r] > 0.0f ? 1.0f / sum[r] : 0.0f, 0.0f);
            finish_row_f32(vec, node, h, iq, b, out);
          }
        }
      });
}

}  // namespace tg::cpu
