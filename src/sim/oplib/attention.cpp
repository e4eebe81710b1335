#include "tilegraph/sim/oplib/attention.h"

#include "oplib/engine_order.h"
#include "oplib/op_checks.h"
#include "oplib/row_steps.h"
#include "tilegraph/sim/lsu.h"
#include "tilegraph/sim/ne.h"

namespace tg::sim::oplib {

namespace {

constexpr const char* kOp = "op_attention_decode";

struct ImmMap {
  uint64_t k, v, scores, scores_t, max, sum, probs, end;
};

ImmMap imm_map(uint64_t base, Format f, int64_t heads, int64_t kv_heads, int64_t n_kv, int64_t d) {
  const uint64_t eb = format_bytes(f), g = uint64_t(heads / kv_heads), kv_bytes = uint64_t(n_kv * d) * eb;
  const uint64_t head_bytes = kv_heads > 1 ? kv_bytes : 0;  // one cache head needs no gathering
  ImmMap m;
  m.k = base;
  m.v = m.k + head_bytes;
  m.scores = m.v + head_bytes;
  m.scores_t = m.scores + g * uint64_t(n_kv) * 4;
  m.max = m.scores_t + g * uint64_t(n_kv) * 4;
  m.sum = m.max + g * 4;
  m.probs = m.sum + g * 4;
  m.end = m.probs + g * uint64_t(n_kv) * eb;
  return m;
}

}  // namespace

uint64_t attention_decode_imm_bytes(Format format, int64_t heads, int64_t kv_heads, int64_t n_kv, int64_t head_dim) {
  return imm_map(0, format, heads, kv_heads, n_kv, head_dim).end;
}

uint64_t op_attention_decode(Tile& tile, const AttentionParam& param, const Tsr& q, const Tsr& k, const Tsr& v,
                             const Tsr* mask, const Tsr& imm, const Tsr& out) {
  using detail::require;
  detail::require_format(kOp, "q", q, {Format::FP32, Format::FP16, Format::BF16});
  require(k.format == q.format && v.format == q.format, kOp, "q, k and v must have one format");
  for (const auto& [name, t] : {std::pair<const char*, const Tsr*>{"q", &q}, {"k", &k}, {"v", &v}, {"out", &out}}) {
    detail::require_layout(kOp, name, *t, {MemLayout::Tensor, MemLayout::NTensor});
  }
  const Shape4 qs = q.shape.real(), ks = k.shape.real();
  const int64_t heads = qs.w, d = qs.c, n_kv = ks.h, kv_heads = ks.w;
  require(qs.n == 1 && qs.h == 1, kOp, "q " + dims_string(q.shape.shape_real) + " is not one token (1 x 1 x H x D)");
  require(ks.n == 1 && ks.c == d && v.shape.real() == ks, kOp,
          "k " + dims_string(k.shape.shape_real) + " and v " + dims_string(v.shape.shape_real) +
              " must both be 1 x n_kv x Hkv x " + std::to_string(d));
  require(kv_heads > 0 && heads % kv_heads == 0, kOp,
          std::to_string(heads) + " query heads do not share " + std::to_string(kv_heads) + " cache heads evenly");
  require(n_kv > 0, kOp, "the cache slice is empty");
  require(out.shape.real() == qs, kOp, "out " + dims_string(out.shape.shape_real) + " must have q's shape");
  if (mask) {
    detail::require_format(kOp, "mask", *mask, {Format::FP32});
    require(mask->shape.real().elements() == n_kv, kOp, "mask must have n_kv = " + std::to_string(n_kv) + " elements");
  }
  detail::require_imm(kOp, imm, attention_decode_imm_bytes(q.format, heads, kv_heads, n_kv, d));
  const ImmMap m = imm_map(imm.addr, q.format, heads, kv_heads, n_kv, d);
  const uint64_t eb = format_bytes(q.format), row = uint64_t(d) * eb;
  const int64_t group = heads / kv_heads;
  uint64_t cycles = 0;
  detail::after_transfers(tile);
  for (int64_t g = 0; g < kv_heads; ++g) {
    uint64_t kg = k.addr, vg = v.addr;
    if (kv_heads > 1) {
      const int64_t stride = int64_t(uint64_t(kv_heads) * row);
      cycles += execute(tile, lsu::GatherScatter{k.addr + uint64_t(g) * row, m.k, row, n_kv, stride, int64_t(row)});
      cycles += execute(tile, lsu::GatherScatter{v.addr + uint64_t(g) * row, m.v, row, n_kv, stride, int64_t(row)});
      kg = m.k;
      vg = m.v;
    }
    detail::order(tile, {Engine::TDMA, Engine::CT},
                  Engine::NE);  // the gathered head; the last group's probabilities read
    ne::Gemm scores;
    scores.in_format = q.format;
    scores.a = q.addr + uint64_t(g * group) * row;
    scores.b = kg;
    scores.dst = m.scores;
    scores.m = group;
    scores.n = n_kv;
    scores.k = d;
    scores.b_transposed = true;
    scores.post.input_scale = param.scale;
    cycles += execute(tile, scores);
    detail::order(tile, {Engine::NE}, Engine::CT);
    detail::order(tile, {Engine::NE}, Engine::TDMA);  // the next head's gather overwrites K/V
    if (mask) {
      cycles += execute(
          tile, cgra::ArithVuV{cgra::ArithOp::Add, Format::FP32, m.scores, mask->addr, m.scores, group * n_kv, n_kv});
    }
    cycles += detail::softmax_rows_f32(tile, m.scores, m.scores_t, m.max, m.sum, group, n_kv);
    cycles += execute(tile, cgra::ConvertV{Format::FP32, q.format, m.scores, m.probs, group * n_kv});
    detail::order(tile, {Engine::CT}, Engine::NE);
    ne::Gemm context;
    context.in_format = q.format;
    context.a = m.probs;
    context.b = vg;
    context.dst = out.addr + uint64_t(g * group * d) * format_bytes(out.format);
    context.m = group;
    context.n = d;
    context.k = n_kv;
    context.post.out_format = out.format;
    cycles += execute(tile, context);
  }
  return cycles;
}

OpCost attention_decode_cost(const ChipConfig& config, Format format, int64_t heads, int64_t kv_heads, int64_t n_kv,
                             int64_t head_dim) {
  const uint64_t imm_bytes = attention_decode_imm_bytes(format, heads, kv_heads, n_kv, head_dim);
  return cost_only_run(config, imm_bytes, [&](Tile& tile, SpmArena& arena) {
    const Tsr q = arena.tensor(format, MemLayout::Tensor, {1, 1, heads, head_dim}, 2);
    const Tsr k = arena.tensor(format, MemLayout::Tensor, {1, n_kv, kv_heads, head_dim}, 3);
    const Tsr v = arena.tensor(format, MemLayout::Tensor, {1, n_kv, kv_heads, head_dim}, 3);
    const Tsr out = arena.tensor(Format::FP32, MemLayout::Tensor, {1, 1, heads, head_dim}, 2);
    const Tsr imm = imm_tsr(arena.allocate(imm_bytes), imm_bytes);
    return op_attention_decode(tile, {}, q, k, v, nullptr, imm, out);
  });
}

}  // namespace tg::sim::oplib
