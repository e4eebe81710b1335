// op_attention_decode against the core reference's flash_attn_ext for one query token: grouped-
// query and plain heads, cache lengths 1, prime and a few hundred, with and without a mask, per
// format, one tile and the heads split over tiles (each tile one cache head's group).
#include <gtest/gtest.h>

#include <limits>

#include "oplib_test_utils.h"
#include "tilegraph/sim/oplib/attention.h"

namespace tg::sim {
namespace {

using namespace oplib;

void run_attention(Format f, int64_t heads, int64_t kv_heads, int64_t n_kv, int64_t d, bool masked, bool split,
                   test::Rng& rng) {
  const std::string what = std::string(format_name(f)) + " H " + std::to_string(heads) + " Hkv " +
                           std::to_string(kv_heads) + " n_kv " + std::to_string(n_kv) + " D " + std::to_string(d) +
                           (masked ? " masked" : "") + (split ? " split" : "");
  SCOPED_TRACE(what);
  Chip chip(test::mesh(split ? 2 : 1, split ? 2 : 1));
  const std::vector<float> q = test::random_values(rng, heads * d);
  const std::vector<float> k = test::random_values(rng, n_kv * kv_heads * d);
  const std::vector<float> v = test::random_values(rng, n_kv * kv_heads * d);
  std::vector<float> mask = test::random_values(rng, n_kv, -1.0f, 0.0f);
  if (n_kv > 2) mask[1] = -std::numeric_limits<float>::infinity();
  const float scale = 1.0f / std::sqrt(float(d));
  std::vector<float> got(static_cast<size_t>(heads * d)), qr, kr, vr;
  // Tile t takes the cache heads t, t + tiles, ...: its groups of query heads and its K/V rows.
  const int tiles = split ? int(std::min<int64_t>(kv_heads, 4)) : 1;
  const int64_t group = heads / kv_heads;
  for (int t = 0; t < tiles; ++t) {
    for (int64_t g = t; g < kv_heads; g += tiles) {
      Tile& tile = chip.tile(t);
      SpmArena arena(tile.spm().size());
      const int64_t hkv = split ? 1 : kv_heads, hq = split ? group : heads, q0 = split ? g * group : 0;
      const Tsr qt = arena.tensor(f, MemLayout::Tensor, {1, 1, hq, d}, 2);
      const Tsr kt = arena.tensor(f, MemLayout::Tensor, {1, n_kv, hkv, d}, 3);
      const Tsr vt = arena.tensor(f, MemLayout::Tensor, {1, n_kv, hkv, d}, 3);
      std::vector<float> qs(q.begin() + q0 * d, q.begin() + (q0 + hq) * d), ks, vs;
      for (int64_t i = 0; i < n_kv; ++i) {
        const int64_t h0 = split ? g : 0;
        ks.insert(ks.end(), k.begin() + (i * kv_heads + h0) * d, k.begin() + (i * kv_heads + h0 + hkv) * d);
        vs.insert(vs.end(), v.begin() + (i * kv_heads + h0) * d, v.begin() + (i * kv_heads + h0 + hkv) * d);
      }
      test::put(tile, qt.addr, qs, f);
      test::put(tile, kt.addr, ks, f);
      test::put(tile, vt.addr, vs, f);
      const Tsr mt = test::put_constant(tile, arena, mask, {1, 1, 1, n_kv});
      const Tsr out = arena.tensor(Format::FP32, MemLayout::Tensor, {1, 1, hq, d}, 2);
      const Tsr imm = test::imm_of(arena, attention_decode_imm_bytes(f, hq, hkv, n_kv, d));
      EXPECT_GT(op_attention_decode(tile, {scale}, qt, kt, vt, masked ? &mt : nullptr, imm, out), 0u);
      const std::vector<float> part = test::get(tile, out.addr, hq * d, Format::FP32);
      std::copy(part.begin(), part.end(), got.begin() + q0 * d);
      if (!split) break;
    }
  }
  // The reference on the values as rounded to the format.
  auto rounded = [&](std::vector<float> x) {
    for (float& e : x) e = round_to(f, e);
    return x;
  };
  Context ctx;
  // k/v are [n_kv][Hkv][D] in memory: the reference wants [D, n_kv, Hkv]; permute through views.
  Tensor* kp = cont(ctx, permute(ctx, test::tensor_of(ctx, rounded(k), {d, kv_heads, n_kv, 1}), 0, 2, 1, 3));
  Tensor* vp = cont(ctx, permute(ctx, test::tensor_of(ctx, rounded(v), {d, kv_heads, n_kv, 1}), 0, 2, 1, 3));
  Tensor* mt = masked ? test::tensor_of(ctx, mask, {n_kv, 1}) : nullptr;
  Tensor* ref = flash_attn_ext(ctx, test::tensor_of(ctx, rounded(q), {d, 1, heads, 1}), kp, vp, mt, scale);
  // The probabilities are rounded to the cache's format before the second product.
  const double abs = f == Format::FP32 ? 1e-5 : f == Format::FP16 ? 4e-3 : 3e-2;
  test::expect_close(got, test::reference_result(ref), Format::FP32, what, abs);
}

TEST(OplibAttention, DecodeStepMatchesReference) {
  test::Rng rng(81);
  for (Format f : test::kOplibFormats) {
    for (const auto& [h, hkv] : {std::pair<int64_t, int64_t>{4, 4}, {8, 2}, {6, 1}}) {
      for (int64_t n_kv : {int64_t(1), int64_t(37), int64_t(300)}) {
        run_attention(f, h, hkv, n_kv, 64, n_kv > 1, false, rng);
      }
      run_attention(f, h, hkv, 53, 32, true, true, rng);
    }
  }
}

TEST(OplibAttention, CostAndErrors) {
  const OpCost c = attention_decode_cost(test::mesh(1, 1), Format::BF16, 8, 2, 256, 64);
  EXPECT_EQ(c.imm_bytes, attention_decode_imm_bytes(Format::BF16, 8, 2, 256, 64));
  EXPECT_GT(c.cycles, 0u);
  Chip chip(test::mesh(1, 1));
  SpmArena arena(chip.tile(0).spm().size());
  const Tsr q = arena.tensor(Format::BF16, MemLayout::Tensor, {1, 1, 6, 16}, 2);
  const Tsr k = arena.tensor(Format::BF16, MemLayout::Tensor, {1, 4, 4, 16}, 3);
  test::expect_error([&] { op_attention_decode(chip.tile(0), {}, q, k, k, nullptr, imm_tsr(0, 0), q); },
                     "op_attention_decode: 6 query heads do not share 4 cache heads evenly");
}

}  // namespace
}  // namespace tg::sim
