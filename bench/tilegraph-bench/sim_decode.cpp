// `tilegraph-bench sim`, section decode: one decode step of the embedded small llama (the
// `small` preset tilegraph run defaults to) on the 16 tiles of the TX8 C-model, op by op as a
// compiler without fusion would emit it: every op split over the tiles (GEMMs by output columns,
// attention by cache head, RoPE by head, element-wise by columns; a one-row norm on one tile), its
// operands loaded from DDR and its result stored back, a chip barrier between ops. Weights are
// random bf16; the cache holds 63 earlier positions.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <random>
#include <vector>

#include "tilegraph/core/rope.h"
#include "tilegraph/model/llama_config.h"
#include "tilegraph/sim/chip.h"
#include "tilegraph/sim/lsu.h"
#include "tilegraph/sim/oplib/attention.h"
#include "tilegraph/sim/oplib/data_layout_ops.h"
#include "tilegraph/sim/oplib/data_movement.h"
#include "tilegraph/sim/oplib/elementwise.h"
#include "tilegraph/sim/oplib/gemm.h"
#include "tilegraph/sim/oplib/norm.h"
#include "tilegraph/sim/oplib/op_cost.h"
#include "tilegraph/sim/oplib/rope.h"

namespace tg::bench {

namespace {

using nlohmann::json;
using namespace sim;
using namespace sim::oplib;

constexpr Format kF = Format::BF16;

// A dense NHWC tensor in DDR.
struct DdrTensor {
  uint64_t addr = 0;
  Shape4 shape;
};

class DecodeStep {
 public:
  explicit DecodeStep(const model::LlamaConfig& m) : m_(m), rng_(5) {}

  DdrTensor alloc(Shape4 shape, Format f = kF) {
    DdrTensor t{next_, shape};
    next_ += (uint64_t(shape.elements()) * format_bytes(f) + 255) / 256 * 256;
    return t;
  }
  DdrTensor weight(Shape4 shape, Format f = kF, float scale = 0.05f) {
    const DdrTensor t = alloc(shape, f);
    std::uniform_real_distribution<float> dist(-scale, scale);
    std::vector<float> v(static_cast<size_t>(shape.elements()));
    for (float& x : v) x = f == Format::FP32 ? 1.0f + dist(rng_) : dist(rng_);
    std::vector<uint8_t> bytes(v.size() * format_bytes(f));
    from_f32(f, v.data(), bytes.data(), int64_t(v.size()), RoundMode::NearestEven);
    chip_.ddr().write(t.addr, bytes.data(), bytes.size());
    return t;
  }

  // A slice [start, start + size) of a DDR tensor into a fresh SPM tensor.
  Tsr load(Tile& tile, SpmArena& arena, const DdrTensor& t, Dims start, Dims size, Format f = kF) {
    Tsr s{f, 0, MemLayout::Tensor, {}};
    s.shape.shape_slice = size;
    if (size[0] > 1) s.layout = MemLayout::NTensor;
    s.addr = arena.allocate(s.allocated_bytes());
    Dims end;
    for (int d = 0; d < 4; ++d) end[d] = start[d] + size[d];
    GShape range = GShape::range(t.shape, start, end);
    op_dma_load(tile, range, t.addr, s);
    return s;
  }
  // An SPM tensor that will be stored at `start` of a DDR tensor.
  Tsr result(SpmArena& arena, const DdrTensor& t, Dims start, Dims size, Format f = kF) {
    Tsr s{f, 0, MemLayout::Tensor, LShape::whole(shape_of(size))};
    s.shape.shape_whole = dims_of(t.shape);
    s.shape.shape_start = start;
    s.addr = arena.allocate(s.allocated_bytes());
    return s;
  }

  // out [N] = x [K] . W [N][K]^T, the N columns split over the tiles.
  void gemm(const DdrTensor& x, const DdrTensor& w, const DdrTensor& out) {
    const int64_t k = x.shape.c, n = w.shape.w, tiles = chip_.tile_count();
    for (int t = 0; t < tiles; ++t) {
      const int64_t n0 = n * t / tiles, n1 = n * (t + 1) / tiles;
      if (n0 == n1) continue;
      Tile& tile = chip_.tile(t);
      SpmArena arena(tile.spm().size());
      const Tsr a = load(tile, arena, x, {0, 0, 0, 0}, {1, 1, 1, k});
      const Tsr b = load(tile, arena, w, {0, 0, n0, 0}, {1, 1, n1 - n0, k});
      const Tsr o = result(arena, out, {0, 0, 0, n0}, {1, 1, 1, n1 - n0});
      op_gemm(tile, {true, false, ne::Activation::None}, a, b, nullptr, o);
      op_store_var(tile, o, out.addr);
    }
    chip_.barrier();
  }

  // out = x * rsqrt(mean(x^2) + eps) * gamma, one row on tile 0.
  void rmsnorm(const DdrTensor& x, const DdrTensor& gamma, const DdrTensor& out) {
    Tile& tile = chip_.tile(0);
    SpmArena arena(tile.spm().size());
    const Tsr in = load(tile, arena, x, {0, 0, 0, 0}, dims_of(x.shape));
    const Tsr g = load(tile, arena, gamma, {0, 0, 0, 0}, dims_of(gamma.shape), Format::FP32);
    const Tsr o = result(arena, out, {0, 0, 0, 0}, dims_of(x.shape));
    const Tsr imm = imm_tsr(arena.allocate(norm_imm_bytes(x.shape)), norm_imm_bytes(x.shape));
    op_rmsnorm(tile, {m_.rms_eps}, in, &g, imm, o);
    op_store_var(tile, o, out.addr);
    chip_.barrier();
  }

  // Rotates each head of x [heads][hd] (tile h takes head h) into out at row `row` of a
  // [rows][heads][hd] tensor.
  void rope(const DdrTensor& x, const DdrTensor& tables, const DdrTensor& out, int64_t row) {
    const int64_t heads = x.shape.w, hd = x.shape.c;
    const RopeParam p{hd, false};
    for (int64_t h = 0; h < heads; ++h) {
      Tile& tile = chip_.tile(int(h % chip_.tile_count()));
      SpmArena arena(tile.spm().size());
      const Tsr in = load(tile, arena, x, {0, 0, h, 0}, {1, 1, 1, hd});
      const Tsr cos = load(tile, arena, tables, {0, 0, 0, 0}, {1, 1, 1, hd / 2}, Format::FP32);
      const Tsr sin = load(tile, arena, tables, {0, 0, 1, 0}, {1, 1, 1, hd / 2}, Format::FP32);
      const Tsr o = result(arena, out, {0, row, h, 0}, {1, 1, 1, hd});
      const uint64_t imm_bytes = rope_imm_bytes(p, {1, 1, 1, hd});
      op_rope(tile, p, in, cos, sin, imm_tsr(arena.allocate(imm_bytes), imm_bytes), o);
      op_store_var(tile, o, out.addr);
    }
    chip_.barrier();
  }

  // Tile g: the query heads of cache head g against the first n_kv cache rows.
  void attention(const DdrTensor& q, const DdrTensor& k_cache, const DdrTensor& v_cache, int64_t n_kv,
                 const DdrTensor& out) {
    const int64_t heads = q.shape.w, kv_heads = k_cache.shape.w, hd = q.shape.c, group = heads / kv_heads;
    for (int64_t g = 0; g < kv_heads; ++g) {
      Tile& tile = chip_.tile(int(g % chip_.tile_count()));
      SpmArena arena(tile.spm().size());
      const Tsr qt = load(tile, arena, q, {0, 0, g * group, 0}, {1, 1, group, hd});
      const Tsr kt = load(tile, arena, k_cache, {0, 0, g, 0}, {1, n_kv, 1, hd});
      const Tsr vt = load(tile, arena, v_cache, {0, 0, g, 0}, {1, n_kv, 1, hd});
      const Tsr o = result(arena, out, {0, 0, g * group, 0}, {1, 1, group, hd});
      const uint64_t imm_bytes = attention_decode_imm_bytes(kF, group, 1, n_kv, hd);
      op_attention_decode(tile, {1.0f / std::sqrt(float(hd))}, qt, kt, vt, nullptr,
                          imm_tsr(arena.allocate(imm_bytes), imm_bytes), o);
      op_store_var(tile, o, out.addr);
    }
    chip_.barrier();
  }

  // out = a + b (or silu(a) * b), the columns split over the tiles.
  void elementwise(const DdrTensor& a, const DdrTensor& b, const DdrTensor& out, bool swiglu) {
    const int64_t n = a.shape.c, tiles = chip_.tile_count();
    for (int t = 0; t < tiles; ++t) {
      const int64_t c0 = n * t / tiles, c1 = n * (t + 1) / tiles;
      if (c0 == c1) continue;
      Tile& tile = chip_.tile(t);
      SpmArena arena(tile.spm().size());
      const Tsr x = load(tile, arena, a, {0, 0, 0, c0}, {1, 1, 1, c1 - c0});
      const Tsr y = load(tile, arena, b, {0, 0, 0, c0}, {1, 1, 1, c1 - c0});
      const Tsr o = result(arena, out, {0, 0, 0, c0}, {1, 1, 1, c1 - c0});
      if (swiglu) {
        op_activation(tile, cgra::UnaryOp::Silu, x, x);
        op_binary(tile, cgra::ArithOp::Mul, x, y, o);
      } else {
        op_binary(tile, cgra::ArithOp::Add, x, y, o);
      }
      op_store_var(tile, o, out.addr);
    }
    chip_.barrier();
  }

  void embedding(const DdrTensor& table, int32_t token, const DdrTensor& out) {
    Tile& tile = chip_.tile(0);
    SpmArena arena(tile.spm().size());
    const Tsr idx = arena.tensor(Format::INT32, MemLayout::Tensor, {1, 1, 1, 1}, 1);
    tile.spm().write(idx.addr, &token, 4);
    const Tsr o = result(arena, out, {0, 0, 0, 0}, {1, 1, 1, table.shape.c});
    op_embedding_gather(tile, DdrTable{table.addr, kF, table.shape.w, table.shape.c}, idx, o);
    op_store_var(tile, o, out.addr);
    chip_.barrier();
  }

  json run(bool print) {
    const int64_t d = m_.n_embd, hd = m_.head_dim(), h = m_.n_head, hkv = m_.n_head_kv, ff = m_.n_ff, ctx = 64;
    const int64_t pos = ctx - 1;
    const DdrTensor tok_embd = weight({1, 1, m_.n_vocab, d});
    struct Layer {
      DdrTensor attn_norm, wq, wk, wv, wo, ffn_norm, w_gate, w_up, w_down, k_cache, v_cache;
    };
    std::vector<Layer> layers;
    for (int64_t l = 0; l < m_.n_layer; ++l) {
      Layer L;
      L.attn_norm = weight({1, 1, 1, d}, Format::FP32);
      L.wq = weight({1, 1, h * hd, d});
      L.wk = weight({1, 1, hkv * hd, d});
      L.wv = weight({1, 1, hkv * hd, d});
      L.wo = weight({1, 1, d, h * hd});
      L.ffn_norm = weight({1, 1, 1, d}, Format::FP32);
      L.w_gate = weight({1, 1, ff, d});
      L.w_up = weight({1, 1, ff, d});
      L.w_down = weight({1, 1, d, ff});
      L.k_cache = weight({1, ctx, hkv, hd}, kF, 1.0f);  // earlier positions; row pos is written
      L.v_cache = weight({1, ctx, hkv, hd}, kF, 1.0f);
      layers.push_back(L);
    }
    const DdrTensor out_norm = weight({1, 1, 1, d}, Format::FP32), lm_head = weight({1, 1, m_.n_vocab, d});
    // RoPE tables of the position: cos row then sin row.
    RopeYarn yarn{hd, false, m_.rope_base, m_.rope_freq_scale, 0.0, 1.0, 0.0, 0.0};
    const RopeTables tables = rope_tables(yarn, {int32_t(pos)});
    const DdrTensor rope_t = alloc({1, 1, 2, hd / 2}, Format::FP32);
    chip_.ddr().write(rope_t.addr, tables.cos.data(), tables.cos.size() * 4);
    chip_.ddr().write(rope_t.addr + tables.cos.size() * 4, tables.sin.data(), tables.sin.size() * 4);
    const DdrTensor x = alloc({1, 1, 1, d}), xn = alloc({1, 1, 1, d}), q = alloc({1, 1, h, hd}),
                    qr = alloc({1, 1, h, hd});
    const DdrTensor kx = alloc({1, 1, hkv, hd}), attn = alloc({1, 1, 1, h * hd}), o = alloc({1, 1, 1, d});
    const DdrTensor gate = alloc({1, 1, 1, ff}), up = alloc({1, 1, 1, ff}), logits = alloc({1, 1, 1, m_.n_vocab});

    const auto t0 = std::chrono::steady_clock::now();
    embedding(tok_embd, 42, x);
    for (const Layer& L : layers) {
      rmsnorm(x, L.attn_norm, xn);
      gemm(xn, L.wq, {q.addr, {1, 1, 1, h * hd}});
      gemm(xn, L.wk, {kx.addr, {1, 1, 1, hkv * hd}});
      // V goes straight into its cache row.
      gemm(xn, L.wv, {L.v_cache.addr + uint64_t(pos * hkv * hd) * 2, {1, 1, 1, hkv * hd}});
      rope(q, rope_t, {qr.addr, {1, 1, h, hd}}, 0);
      rope(kx, rope_t, L.k_cache, pos);
      attention(qr, L.k_cache, L.v_cache, ctx, {attn.addr, {1, 1, h, hd}});
      gemm(attn, L.wo, o);
      elementwise(x, o, x, false);
      rmsnorm(x, L.ffn_norm, xn);
      gemm(xn, L.w_gate, gate);
      gemm(xn, L.w_up, up);
      elementwise(gate, up, gate, true);
      gemm(gate, L.w_down, o);
      elementwise(x, o, x, false);
    }
    rmsnorm(x, out_norm, xn);
    gemm(xn, lm_head, logits);
    const ChipReport report = chip_.report();
    const double host = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (print) {
      std::printf(
          "decode step, llama small (d %lld, %lld layers, %lld heads / %lld kv, ff %lld, vocab %lld) at position "
          "%lld on 16 tiles: %llu instructions, %llu cycles (%.1f us simulated); host %.3f s\n",
          (long long)d, (long long)m_.n_layer, (long long)h, (long long)hkv, (long long)ff, (long long)m_.n_vocab,
          (long long)pos, (unsigned long long)report.instructions, (unsigned long long)report.total_cycles,
          report.seconds * 1e6, host);
    }
    return {{"model", "small"},
            {"position", pos},
            {"tiles", chip_.tile_count()},
            {"instructions", report.instructions},
            {"cycles", report.total_cycles},
            {"simulated_seconds", report.seconds},
            {"ddr_bytes", report.ddr_read_bytes + report.ddr_write_bytes},
            {"hazards", report.hazard_count},
            {"host_seconds", host}};
  }

 private:
  model::LlamaConfig m_;
  Chip chip_;
  std::mt19937 rng_;
  uint64_t next_ = 0;
};

}  // namespace

json run_sim_decode(bool print) { return DecodeStep(model::llama_preset("small")).run(print); }

}  // namespace tg::bench
