// The tile programs of a llama decode step's data and attention ops against the core reference:
// get_rows (op_embedding_gather from DDR), set_rows (op_wdmaScatter into DDR, converted on the
// way), cpy (CGRA conversion), rope (op_rope with cos / sin tables of the positions) and
// flash_attn_ext (op_attention_decode per query row and cache head), then the graphs they run in:
// an attention block, a llama block in prefill and decode, a llama decode step on 1x1, 2x2 and
// 4x4 meshes.
//
// Tolerances (nmse against the reference):
//   exact (0): get_rows, set_rows, cpy: they move and round values as the reference does.
//   1e-10: f32 rope and attention over an f32 cache (f32 arithmetic on the CGRA and NE vs the
//          reference's double).
//   1e-6: f16 rope (one f16 rounding of the result, after f32 arithmetic).
//   kHalfCache 1e-5, kBf16Cache 1e-3: attention over an f16 / bf16 cache: the query and the
//          probabilities are rounded to the cache's type for the NE (ggml's CPU backend rounds
//          the query likewise); graphs holding such attention take the same bound.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

#include <gtest/gtest.h>
#include "chip_run.h"
#include "common/tensor_utils.h"
#include "compiler_case.h"
#include "random_graph.h"
#include "tilegraph/compiler/chip_program.h"
#include "tilegraph/core/ops.h"
#include "tilegraph/model/llama_config.h"
#include "tilegraph/model/llama_model.h"
#include "tilegraph/model/llama_session.h"
#include "tilegraph/model/transformer_block.h"

namespace tg::compiler {
namespace {

using test::expect_chip_matches_reference;
using test::mesh;
using test::Rng;

constexpr double kExact = 0.0;
constexpr double kF32 = 1e-10;
constexpr double kHalfRope = 1e-6;
constexpr double kHalfCache = 1e-5;
constexpr double kBf16Cache = 1e-3;

std::string name(DType type) { return std::string(dtype_name(type)); }

// An i32 input of `ne` holding `values` (repeated to fill it).
Tensor* index_input(Context& ctx, std::initializer_list<int64_t> ne, const std::vector<int32_t>& values) {
  Tensor* t = ctx.new_tensor(DType::I32, ne);
  t->flags |= kFlagInput;
  auto* data = static_cast<int32_t*>(t->data);
  for (int64_t i = 0; i < t->nelements(); ++i) data[i] = values[size_t(i) % values.size()];
  return t;
}

// `count` distinct rows of [0, rows), shuffled.
std::vector<int32_t> distinct_rows(Rng& rng, int64_t rows, int64_t count) {
  std::vector<int32_t> all(static_cast<size_t>(rows));
  std::iota(all.begin(), all.end(), 0);
  std::shuffle(all.begin(), all.end(), rng);
  all.resize(size_t(count));
  return all;
}

struct RowsCase {
  DType type;
  int64_t row_elements, count;
};

// Every case is a compiled program (a JIT build): a few shapes per type, edge sizes among them.
TEST(CodegenDecodeOps, GetRowsGathersFromTheTableInDdr) {
  const RowsCase cases[] = {{DType::F32, 1, 1},  {DType::F32, 129, 13}, {DType::F16, 64, 5},
                            {DType::F16, 31, 1}, {DType::BF16, 128, 7}, {DType::I32, 33, 3}};
  for (const RowsCase& c : cases) {
    SCOPED_TRACE(name(c.type) + " e " + std::to_string(c.row_elements) + " count " + std::to_string(c.count));
    Context ctx;
    Rng rng{unsigned(c.row_elements * 31 + c.count)};
    const int64_t rows = 17, e = c.row_elements;
    Tensor* table = c.type == DType::I32 ? index_input(ctx, {e, rows}, distinct_rows(rng, 1000, e * rows))
                                         : test::random_weight(ctx, rng, c.type, {e, rows});
    std::vector<int32_t> ids;
    for (int64_t i = 0; i < c.count; ++i) ids.push_back(int32_t(rng() % rows));
    expect_chip_matches_reference({get_rows(ctx, table, index_input(ctx, {c.count}, ids))}, kExact);
  }
}

TEST(CodegenDecodeOps, GetRowsOfBatchedTablesAndInputTables) {
  Context ctx;
  Rng rng{5};
  Tensor* table = test::random_input(ctx, rng, DType::F16, {32, 7, 3});
  Tensor* ids = index_input(ctx, {4, 3}, {6, 0, 3, 3, 1, 5, 2, 6, 0, 4, 4, 1});
  expect_chip_matches_reference({get_rows(ctx, table, ids)}, kExact);
  // The embedded model's embedding: one row of many, on 16 tiles (its columns cut).
  Context big;
  Tensor* embd = test::random_weight(big, rng, DType::F16, {256, 2048});
  expect_chip_matches_reference({get_rows(big, embd, index_input(big, {1}, {1979}))}, kExact, mesh(4, 4));
}

TEST(CodegenDecodeOps, SetRowsWritesRowsIntoTheTensorInDdr) {
  const RowsCase cases[] = {{DType::F32, 1, 1}, {DType::F16, 128, 1}, {DType::F16, 129, 3}, {DType::BF16, 64, 2}};
  for (const RowsCase& c : cases) {
    SCOPED_TRACE(name(c.type) + " e " + std::to_string(c.row_elements) + " n " + std::to_string(c.count));
    Context ctx;
    Rng rng{unsigned(c.row_elements + 7 * c.count)};
    const int64_t rows = 11;
    Tensor* cache = test::random_input(ctx, rng, c.type, {c.row_elements, rows});
    Tensor* src = test::random_input(ctx, rng, DType::F32, {c.row_elements, c.count});
    Tensor* written = set_rows(ctx, cache, src, index_input(ctx, {c.count}, distinct_rows(rng, rows, c.count)));
    expect_chip_matches_reference({written}, kExact);
  }
}

TEST(CodegenDecodeOps, SetRowsOfBatchesWithRepeatedIndices) {
  Context ctx;
  Rng rng{11};
  Tensor* cache = test::random_input(ctx, rng, DType::F16, {48, 9, 4});
  Tensor* src = test::random_input(ctx, rng, DType::F32, {48, 2, 4});
  // idx [2, 2] repeats over the 4 batches of dimension 2.
  Tensor* written = set_rows(ctx, cache, src, index_input(ctx, {2, 2}, {8, 0, 3, 5}));
  expect_chip_matches_reference({written}, kExact, mesh(2, 2));
}

TEST(CodegenDecodeOps, CpyConvertsBetweenFloatTypes) {
  const std::pair<DType, DType> pairs[] = {
      {DType::F32, DType::F16}, {DType::F32, DType::BF16}, {DType::F16, DType::F32}, {DType::F32, DType::F32}};
  int64_t e = 1;
  for (auto [from, to] : pairs) {
    SCOPED_TRACE(name(from) + " -> " + name(to) + " e " + std::to_string(e));
    Context ctx;
    Rng rng{unsigned(e)};
    Tensor* a = test::random_input(ctx, rng, from, {e, 5});
    Tensor* b = test::random_input(ctx, rng, to, {e, 5});
    expect_chip_matches_reference({cpy(ctx, a, b)}, kExact);
    e = e * 4 + 29;  // 1, 33, 161, 673
  }
  // Into a tensor of another shape (the same element count).
  Context ctx;
  Rng rng{2};
  Tensor* a = test::random_input(ctx, rng, DType::F32, {32, 6});
  Tensor* b = test::random_input(ctx, rng, DType::F16, {64, 3});
  expect_chip_matches_reference({cpy(ctx, a, b)}, kExact);
}

struct RopeCase {
  int64_t head_dim, heads, tokens, n_dims;
  RopeMode mode;
  bool factors;
  float ext_factor;
};

TEST(CodegenDecodeOps, RopeRotatesWithTheTablesOfItsPositions) {
  const RopeCase cases[] = {
      {32, 4, 1, 32, RopeMode::NORMAL, false, 0.0f},  {64, 5, 3, 64, RopeMode::NEOX, false, 0.0f},
      {128, 2, 7, 128, RopeMode::NORMAL, true, 0.0f}, {64, 3, 2, 32, RopeMode::NORMAL, false, 0.0f},
      {2, 1, 1, 2, RopeMode::NEOX, false, 0.0f},      {96, 2, 5, 96, RopeMode::NEOX, true, 1.0f},
  };
  int i = 0;
  for (const RopeCase& c : cases) {
    const DType type = i++ % 2 ? DType::F16 : DType::F32;
    {
      SCOPED_TRACE(name(type) + " head_dim " + std::to_string(c.head_dim) + " heads " + std::to_string(c.heads) +
                   " tokens " + std::to_string(c.tokens) + " n_dims " + std::to_string(c.n_dims));
      Context ctx;
      Rng rng{unsigned(c.head_dim * 7 + c.tokens)};
      Tensor* x = test::random_input(ctx, rng, type, {c.head_dim, c.heads, c.tokens});
      std::vector<int32_t> positions;
      for (int64_t t = 0; t < c.tokens; ++t) positions.push_back(int32_t(rng() % 4096));
      RopeParams params;
      params.n_dims = int32_t(c.n_dims);
      params.mode = c.mode;
      params.ext_factor = c.ext_factor;
      params.n_ctx_orig = c.ext_factor != 0.0f ? 512 : 0;
      Tensor* factors = c.factors ? test::random_weight(ctx, rng, DType::F32, {c.n_dims / 2}, 1.0f, 4.0f) : nullptr;
      Tensor* y = rope(ctx, x, index_input(ctx, {c.tokens}, positions), params, factors);
      expect_chip_matches_reference({y}, type == DType::F32 ? kF32 : kHalfRope);
    }
  }
}

struct AttentionCase {
  int64_t head_dim, heads, kv_heads, n_kv, n_q;
};

// Causal over the last n_q of n_kv positions, as a llama step's mask.
Tensor* causal_mask(Context& ctx, int64_t n_kv, int64_t n_q) {
  Tensor* mask = ctx.new_tensor(DType::F32, {n_kv, n_q});
  mask->flags |= kFlagInput;
  auto* m = static_cast<float*>(mask->data);
  for (int64_t q = 0; q < n_q; ++q) {
    for (int64_t j = 0; j < n_kv; ++j) {
      m[q * n_kv + j] = j <= n_kv - n_q + q ? 0.0f : -std::numeric_limits<float>::infinity();
    }
  }
  return mask;
}

TEST(CodegenDecodeOps, FlashAttentionPerQueryRowAndCacheHead) {
  const AttentionCase cases[] = {
      {32, 8, 4, 32, 1}, {64, 4, 4, 13, 1}, {128, 8, 2, 7, 1}, {32, 6, 3, 1, 1},
      {64, 4, 1, 29, 1}, {32, 8, 4, 17, 5}, {64, 2, 2, 9, 3},  {16, 3, 1, 31, 2},
  };
  const DType caches[] = {DType::F16, DType::F32, DType::BF16};
  int i = 0;
  for (const AttentionCase& c : cases) {
    const DType cache = caches[i++ % 3];
    {
      SCOPED_TRACE(name(cache) + " D " + std::to_string(c.head_dim) + " H " + std::to_string(c.heads) + " Hkv " +
                   std::to_string(c.kv_heads) + " n_kv " + std::to_string(c.n_kv) + " n_q " + std::to_string(c.n_q));
      Context ctx;
      Rng rng{unsigned(c.head_dim + c.heads * 3 + c.n_kv * 5 + c.n_q)};
      Tensor* q = test::random_input(ctx, rng, DType::F32, {c.head_dim, c.n_q, c.heads});
      Tensor* k = test::random_input(ctx, rng, cache, {c.head_dim, c.n_kv, c.kv_heads});
      Tensor* v = test::random_input(ctx, rng, cache, {c.head_dim, c.n_kv, c.kv_heads});
      Tensor* mask = c.n_q > 1 ? causal_mask(ctx, c.n_kv, c.n_q) : nullptr;
      Tensor* y = flash_attn_ext(ctx, q, k, v, mask, 1.0f / std::sqrt(float(c.head_dim)));
      const double tolerance = cache == DType::F32 ? kF32 : cache == DType::F16 ? kHalfCache : kBf16Cache;
      expect_chip_matches_reference({y}, tolerance, mesh(2, 2));
    }
  }
}

TEST(CodegenDecodeOps, ChipSupportsSaysWhyNot) {
  Context ctx;
  Rng rng{3};
  Tensor* q = test::random_input(ctx, rng, DType::F32, {32, 1, 4});
  Tensor* k = test::random_input(ctx, rng, DType::F16, {32, 8, 2});
  Tensor* v = test::random_input(ctx, rng, DType::F16, {32, 8, 2});
  std::string why;
  EXPECT_TRUE(chip_supports(*flash_attn_ext(ctx, q, k, v, nullptr, 0.2f), &why)) << why;
  EXPECT_FALSE(chip_supports(*flash_attn_ext(ctx, q, k, v, nullptr, 0.2f, 0.0f, 30.0f), &why));
  EXPECT_NE(why.find("softcap"), std::string::npos) << why;
  Tensor* v32 = test::random_input(ctx, rng, DType::F32, {32, 8, 2});
  EXPECT_FALSE(chip_supports(*flash_attn_ext(ctx, q, k, v32, nullptr, 0.2f), &why));
  EXPECT_NE(why.find("different types"), std::string::npos) << why;
  Tensor* table = test::random_weight(ctx, rng, DType::Q8_0, {32, 8});
  EXPECT_FALSE(chip_supports(*get_rows(ctx, table, index_input(ctx, {1}, {0})), &why));
  EXPECT_NE(why.find("block-quantized"), std::string::npos) << why;
}

// The attention half of a llama block: projections, rope, the cache writes, attention over the
// cache, the output projection.
TEST(CodegenDecodeOps, AttentionBlockRunsOnTheChip) {
  for (int64_t n_tokens : {1, 4}) {
    SCOPED_TRACE("tokens " + std::to_string(n_tokens));
    Context ctx;
    Rng rng{unsigned(n_tokens)};
    const int64_t n_embd = 64, n_head = 4, n_head_kv = 2, head_dim = 16, n_ctx = 24, n_past = 6;
    const int64_t n_kv = n_past + n_tokens, kv_dim = head_dim * n_head_kv;
    Tensor* x = test::random_input(ctx, rng, DType::F32, {n_embd, n_tokens});
    Tensor* wq = test::random_weight(ctx, rng, DType::F32, {n_embd, n_embd}, -0.2f, 0.2f);
    Tensor* wk = test::random_weight(ctx, rng, DType::F32, {n_embd, kv_dim}, -0.2f, 0.2f);
    Tensor* wv = test::random_weight(ctx, rng, DType::F32, {n_embd, kv_dim}, -0.2f, 0.2f);
    Tensor* wo = test::random_weight(ctx, rng, DType::F32, {n_embd, n_embd}, -0.2f, 0.2f);
    Tensor* k_cache = test::random_input(ctx, rng, DType::F16, {kv_dim, n_ctx});
    Tensor* v_cache = test::random_input(ctx, rng, DType::F16, {kv_dim, n_ctx});
    std::vector<int32_t> positions;
    for (int64_t t = 0; t < n_tokens; ++t) positions.push_back(int32_t(n_past + t));
    Tensor* pos = index_input(ctx, {n_tokens}, positions);
    Tensor* rows = index_input(ctx, {n_tokens}, positions);
    RopeParams params;
    params.n_dims = int32_t(head_dim);
    Tensor* q = rope(ctx, reshape(ctx, mul_mat(ctx, wq, x), {head_dim, n_head, n_tokens}), pos, params);
    Tensor* k = rope(ctx, reshape(ctx, mul_mat(ctx, wk, x), {head_dim, n_head_kv, n_tokens}), pos, params);
    Tensor* k_written = set_rows(ctx, k_cache, reshape(ctx, k, {kv_dim, n_tokens}), rows);
    Tensor* v_written = set_rows(ctx, v_cache, mul_mat(ctx, wv, x), rows);
    const size_t row = k_cache->nb[1], head = row_size(DType::F16, head_dim);
    Tensor* k_all = view_3d(ctx, k_written, head_dim, n_kv, n_head_kv, row, head, 0);
    Tensor* v_all = view_3d(ctx, v_written, head_dim, n_kv, n_head_kv, row, head, 0);
    Tensor* attn = flash_attn_ext(ctx, permute(ctx, q, 0, 2, 1, 3), k_all, v_all, causal_mask(ctx, n_kv, n_tokens),
                                  1.0f / std::sqrt(float(head_dim)));
    Tensor* y = mul_mat(ctx, wo, reshape(ctx, attn, {n_embd, n_tokens}));
    expect_chip_matches_reference({y}, kHalfCache);
  }
}

// A llama block as the model builds it (build_block), f32 weights and an f16 cache holding
// earlier positions.
void expect_block_runs_on_chip(int64_t n_tokens, int64_t n_past, const sim::ChipConfig& chip) {
  model::BlockConfig config;
  config.n_embd = 64;
  config.n_head = 4;
  config.n_head_kv = 2;
  config.n_ff = 96;
  config.n_ctx = 16;
  config.weight_type = DType::F32;
  Context ctx;
  Rng rng{unsigned(n_tokens * 10 + n_past)};
  const model::BlockWeights weights = model::make_block_weights(ctx, config, 3);
  const model::KvCache cache = model::make_kv_cache(ctx, config);
  test::fill_uniform(*cache.k, rng);
  test::fill_uniform(*cache.v, rng);
  const int64_t n_kv = n_past + n_tokens;
  const model::StepInputs inputs = model::make_step_inputs(ctx, config, n_tokens, n_kv);
  test::fill_uniform(*inputs.x, rng);
  model::fill_step_inputs(inputs, n_past);
  expect_chip_matches_reference({model::build_block(ctx, config, weights, cache, inputs, n_kv)}, kHalfCache, chip);
}

TEST(CodegenDecodeOps, LlamaBlockDecodeRunsOnTheChip) { expect_block_runs_on_chip(1, 9, mesh(2, 2)); }

TEST(CodegenDecodeOps, LlamaBlockPrefillRunsOnTheChip) { expect_block_runs_on_chip(5, 0, mesh(2, 2)); }

// The tiny model's decode step (build_llama_step, f32 weights) on 1x1, 2x2 and 4x4 meshes: each
// within kHalfCache of the reference, and of each other.
TEST(CodegenDecodeOps, LlamaDecodeGivesTheSameLogitsOnEveryMesh) {
  const model::LlamaConfig config = model::llama_preset("tiny");
  const model::LlamaModel llama = model::LlamaModel::generate(config, DType::F32, 1);
  const int64_t n_ctx = 16, n_past = 5, n_kv = n_past + 1;
  const model::BlockConfig block = config.block_config(n_ctx, DType::F32, DType::F16);
  Context ctx;
  Rng rng(9);
  std::vector<model::KvCache> caches;
  for (int64_t l = 0; l < config.n_layer; ++l) {
    caches.push_back(model::make_kv_cache(ctx, block));
    test::fill_uniform(*caches.back().k, rng);
    test::fill_uniform(*caches.back().v, rng);
  }
  const model::LlamaStep step = model::build_llama_step(ctx, llama, block, caches, 1, n_kv, false);
  ctx.allocate_all();
  model::fill_step_inputs(step.inputs, n_past);
  static_cast<int32_t*>(step.ids->data)[0] = 97;
  test::CompilerContext c;
  const test::CompilerCase cc = test::make_compiler_case(c.context, {step.logits});
  std::vector<HostTensor> first;
  for (int m : {1, 2, 4}) {
    SCOPED_TRACE("mesh " + std::to_string(m) + "x" + std::to_string(m));
    const test::ChipRun run = test::run_on_chip({step.logits}, cc, mesh(m, m));
    test::expect_close(run.results, cc.reference, kHalfCache);
    EXPECT_EQ(run.report.hazard_count, 0u) << (run.report.hazards.empty() ? "" : run.report.hazards[0]);
    if (first.empty()) {
      first = run.results;
    } else {
      test::expect_close(run.results, first, kHalfCache, "against the 1x1 mesh");
    }
  }
}

}  // namespace
}  // namespace tg::compiler
