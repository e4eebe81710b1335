// `tilegraph-bench sim`: the TX8 C-model (docs/sim.md) measured two ways, simulated cycles
// against the roofline of what is simulated, and the host time the simulation takes:
//   ops     each oplib op on one tile: its cycles (the cost query) against the larger of its NE
//           bound (flops at the tile's NE peak for the format) and its DDR bound (operand and
//           result bytes at 200 GB/s); host time of one simulated op.
//   gemm    a 4096 x 4096 x 4096 bf16 GEMM split over the 16 tiles by hand: each tile owns a
//           512 x 512 block of a 2048 x 2048 quarter of C per pass; every tile loads a quarter of
//           its row's A panel and of its column's B panel per K step and sends it to the three
//           other tiles of its row (column) over the NoC, triple-buffered, two accumulators so
//           that a pass's store overlaps the next pass; C leaves as bf16. Against the NE-peak
//           bound (2 M N K / 128 TFLOPS).
//   copy    a DDR-bound copy: 16 tiles each loading and storing 1 MiB chunks of a 128 MiB tensor
//           (double-buffered), against (read + write bytes) / 200 GB/s.
//   decode  one decode step of the embedded small llama (tilegraph run's default model) at
//           position 63, op by op on 16 tiles with random bf16 weights, a barrier between ops:
//           host time and simulated cycles.
// `--only <section>`, `--json` one JSON object.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "measure.h"
#include "suites.h"
#include "tilegraph/core/error.h"
#include "tilegraph/sim/chip.h"
#include "tilegraph/sim/dte.h"
#include "tilegraph/sim/lsu.h"
#include "tilegraph/sim/ne.h"
#include "tilegraph/sim/oplib/attention.h"
#include "tilegraph/sim/oplib/batchnorm.h"
#include "tilegraph/sim/oplib/data_layout_ops.h"
#include "tilegraph/sim/oplib/data_movement.h"
#include "tilegraph/sim/oplib/elementwise.h"
#include "tilegraph/sim/oplib/gemm.h"
#include "tilegraph/sim/oplib/norm.h"
#include "tilegraph/sim/oplib/rope.h"
#include "tilegraph/sim/oplib/softmax.h"

namespace tg::bench {

namespace {

using nlohmann::json;
using namespace sim;
using namespace sim::oplib;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Random values rounded to `format` written at addr of the DDR.
void fill_ddr(Chip& chip, uint64_t addr, int64_t n, Format format, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = dist(rng);
  std::vector<uint8_t> bytes(static_cast<size_t>(n) * format_bytes(format));
  from_f32(format, v.data(), bytes.data(), n, RoundMode::NearestEven);
  chip.ddr().write(addr, bytes.data(), bytes.size());
}

// NE flops a tile does in a cycle for an input format.
double ne_flops_per_cycle(const ChipConfig& c, Format f) {
  return 2048.0 * c.ne.arrays_per_tile / c.ne_cycles_per_step(f);
}

// ---------------------------------------------------------------------------------------------
// ops

struct OpCase {
  std::string op, shape;
  std::function<OpCost()> cost;
  double flops = 0;      // NE work
  double ddr_bytes = 0;  // operands in and result out
};

json run_ops(bool print) {
  const ChipConfig c;
  const Format bf = Format::BF16;
  std::vector<OpCase> cases = {
      {"batchnorm_inference fp16 NCx", "4x28x28x129",
       [&] {
         return batchnorm_inference_cost(c, Format::FP16, MemLayout::NCx, {4, 28, 28, 129});
       },
       0, 2.0 * 2 * 4 * 28 * 28 * 129},
      {"batchnorm_inference fp16 NCx", "4x112x2x30",
       [&] {
         return batchnorm_inference_cost(c, Format::FP16, MemLayout::NCx, {4, 112, 2, 30});
       },
       0, 2.0 * 2 * 4 * 112 * 2 * 30},
      {"gemm bf16", "256x256x1024", [&] { return gemm_cost(c, bf, 256, 256, 1024); }, 2.0 * 256 * 256 * 1024,
       2.0 * (256 * 1024 * 2) + 4.0 * 256 * 256},
      {"gemm bf16 (decode)", "1x256x256", [&] { return gemm_cost(c, bf, 1, 256, 256); }, 2.0 * 256 * 256,
       2.0 * (256 + 256 * 256) + 4.0 * 256},
      {"conv2d bf16 3x3", "1x28x28x64 -> 128",
       [&] {
         return conv2d_cost(c, {1, 1, 1, 1}, bf, {1, 28, 28, 64}, {3, 3, 64, 128});
       },
       2.0 * 28 * 28 * 128 * 9 * 64, 2.0 * (28 * 28 * 64 + 9 * 64 * 128) + 4.0 * 28 * 28 * 128},
      {"binary add bf16", "1x1x64x4096",
       [&] {
         return binary_cost(c, cgra::ArithOp::Add, bf, MemLayout::Tensor, {1, 1, 64, 4096});
       },
       0, 3.0 * 2 * 64 * 4096},
      {"activation silu bf16", "1x1x64x4096",
       [&] {
         return activation_cost(c, cgra::UnaryOp::Silu, bf, MemLayout::Tensor, {1, 1, 64, 4096});
       },
       0, 2.0 * 2 * 64 * 4096},
      {"rmsnorm bf16", "1x1x64x4096",
       [&] {
         return rmsnorm_cost(c, bf, {1, 1, 64, 4096});
       },
       0, 2.0 * 2 * 64 * 4096},
      {"layernorm bf16", "1x1x64x4096",
       [&] {
         return layernorm_cost(c, bf, {1, 1, 64, 4096});
       },
       0, 2.0 * 2 * 64 * 4096},
      {"softmax bf16 masked", "1x1x32x2048",
       [&] {
         return softmax_cost(c, bf, {1, 1, 32, 2048}, true);
       },
       0, 2.0 * 2 * 32 * 2048 + 4.0 * 32 * 2048},
      {"rope bf16", "1x1x32x128",
       [&] {
         return rope_cost(c, {128, false}, bf, {1, 1, 32, 128});
       },
       0, 2.0 * 2 * 32 * 128},
      {"attention_decode bf16", "H32 Hkv8 n_kv 512 D128", [&] { return attention_decode_cost(c, bf, 32, 8, 512, 128); },
       4.0 * 32 * 512 * 128, 2.0 * 2 * 512 * 8 * 128},
      {"transpose bf16", "1x1x512x512",
       [&] {
         return transpose_cost(c, bf, {1, 1, 512, 512});
       },
       0, 2.0 * 2 * 512 * 512},
      {"embedding_gather bf16", "32 rows of 4096",
       [&] {
         return embedding_gather_cost(c, DdrTable{0, bf, 32000, 4096}, 32);
       },
       0, 2.0 * 2 * 32 * 4096},
  };
  json out = json::array();
  if (print)
    std::printf("%-30s %-24s %12s %12s %12s %7s %12s %10s\n", "op", "shape", "cycles", "NE bound", "DDR bound",
                "x bound", "imm bytes", "host ms");
  for (const OpCase& oc : cases) {
    OpCost cost;
    const Timing t = measure(
        "sim/ops/" + oc.op + "/" + oc.shape, [&] { cost = oc.cost(); }, 3, 0.02);
    const double ne_bound = oc.flops / ne_flops_per_cycle(c, Format::BF16);
    const double ddr_bound = oc.ddr_bytes / c.ddr.bytes_per_cycle;
    const double ratio = double(cost.cycles) / std::max(ne_bound, ddr_bound);
    if (print) {
      std::printf("%-30s %-24s %12llu %12.0f %12.0f %7.2f %12llu %10.3f\n", oc.op.c_str(), oc.shape.c_str(),
                  (unsigned long long)cost.cycles, ne_bound, ddr_bound, ratio, (unsigned long long)cost.imm_bytes,
                  t.median_s * 1e3);
    }
    out.push_back({{"op", oc.op},
                   {"shape", oc.shape},
                   {"cycles", cost.cycles},
                   {"imm_bytes", cost.imm_bytes},
                   {"ne_bound_cycles", ne_bound},
                   {"ddr_bound_cycles", ddr_bound},
                   {"cycles_over_bound", ratio},
                   {"host_seconds_median", t.median_s},
                   {"host_seconds_min", t.min_s}});
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// gemm: 4096^3 bf16 over 16 tiles, operands shared over the NoC.

json run_gemm(bool print) {
  constexpr int64_t kSize = 4096, kBlock = 512, kKc = 256, kQuarter = kBlock / 4;
  Chip chip;
  const ChipConfig& c = chip.config();
  if (c.mesh_x != 4 || c.mesh_y != 4) throw Error("sim gemm section: needs the default 4x4 mesh");
  const Format f = Format::BF16;
  const uint64_t eb = 2, a_ddr = 0, w_ddr = uint64_t(kSize * kSize) * eb, d_ddr = 2 * w_ddr;
  std::mt19937 rng(7);
  fill_ddr(chip, a_ddr, kSize * kSize, f, rng);
  fill_ddr(chip, w_ddr, kSize * kSize, f, rng);  // W [N][K]: C = A . W^T
  const Shape4 whole{1, 1, kSize, kSize};
  // SPM (4 MiB): two f32 accumulators (1 MiB each), their bf16 copy, three A and three W panel
  // buffers: a step's loads and transfers (together longer than a GEMM when each waits for the
  // one before) run two steps ahead of the NE.
  constexpr int kStages = 3;
  const uint64_t acc_bytes = uint64_t(kBlock * kBlock) * 4, panel = uint64_t(kBlock * kKc) * eb;
  const uint64_t acc[2] = {0, acc_bytes}, out_bf16 = 2 * acc_bytes, panels = out_bf16 + acc_bytes / 2;
  auto a_buf = [&](int b) { return panels + uint64_t(b) * 2 * panel; };
  auto w_buf = [&](int b) { return a_buf(b) + panel; };
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<Event> ne_done(16 * kStages), stored(16 * 2);  // per tile, per buffer / accumulator
  const int64_t steps = kSize / kKc;
  std::vector<Event> a_loaded(16);
  for (int pass = 0; pass < 4; ++pass) {
    const int64_t r0 = (pass / 2) * 2048, c0 = (pass % 2) * 2048;
    for (int64_t s = 0; s < steps; ++s) {
      const int b = int((pass * steps + s) % kStages);  // counted across passes: no buffer a GEMM still reads
      const int64_t k0 = s * kKc;
      // Each tile loads its quarter of its row's A panel and of its column's W panel.
      for (int t = 0; t < 16; ++t) {
        Tile& tile = chip.tile(t);
        tile.wait(Engine::RDMA, ne_done[size_t(t * kStages + b)]);
        const int64_t a_row = r0 + tile.y() * kBlock + tile.x() * kQuarter,
                      w_row = c0 + tile.x() * kBlock + tile.y() * kQuarter;
        execute(tile, lsu::LoadVar{f,
                                   {a_ddr, whole, {0, 0, a_row, k0}, {1, 1, kQuarter, kKc}},
                                   a_buf(b) + uint64_t(tile.x() * kQuarter * kKc) * eb,
                                   MemLayout::Tensor});
        a_loaded[size_t(t)] = tile.record(Engine::RDMA);
        execute(tile, lsu::LoadVar{f,
                                   {w_ddr, whole, {0, 0, w_row, k0}, {1, 1, kQuarter, kKc}},
                                   w_buf(b) + uint64_t(tile.y() * kQuarter * kKc) * eb,
                                   MemLayout::Tensor});
      }
      // ... and sends them to the other tiles of its row (A, as soon as it is loaded) and column
      // (W), once they are done with this buffer.
      for (int t = 0; t < 16; ++t) {
        Tile& tile = chip.tile(t);
        const uint64_t a_part = a_buf(b) + uint64_t(tile.x() * kQuarter * kKc) * eb;
        const uint64_t w_part = w_buf(b) + uint64_t(tile.y() * kQuarter * kKc) * eb;
        const uint64_t bytes = uint64_t(kQuarter * kKc) * eb;
        tile.wait(Engine::DTE, a_loaded[size_t(t)]);
        for (int other = 0; other < 4; ++other) {
          if (other == tile.x()) continue;
          const int to = tile.y() * 4 + other;
          tile.wait(Engine::DTE, ne_done[size_t(to * kStages + b)]);
          execute(tile, dte::Copy{a_part, to, a_part, bytes});
        }
        tile.wait(Engine::DTE, tile.record(Engine::RDMA));
        for (int other = 0; other < 4; ++other) {
          if (other == tile.y()) continue;
          const int to = other * 4 + tile.x();
          tile.wait(Engine::DTE, ne_done[size_t(to * kStages + b)]);
          execute(tile, dte::Copy{w_part, to, w_part, bytes});
        }
      }
      for (int t = 0; t < 16; ++t) {
        Tile& tile = chip.tile(t);
        tile.wait(Engine::NE, tile.record(Engine::RDMA));
        for (int other = 0; other < 4; ++other) {
          tile.wait(Engine::NE, chip.tile(tile.y() * 4 + other).record(Engine::DTE));
          tile.wait(Engine::NE, chip.tile(other * 4 + tile.x()).record(Engine::DTE));
        }
        if (s == 0) tile.wait(Engine::NE, stored[size_t(t * 2 + pass % 2)]);
        execute(tile, ne::Gemm{f, a_buf(b), w_buf(b), acc[pass % 2], kBlock, kBlock, kKc, true, s > 0});
        ne_done[size_t(t * kStages + b)] = tile.record(Engine::NE);
      }
    }
    // C leaves as bf16: convert on the CGRA, store on the WDMA, while the next pass computes.
    for (int t = 0; t < 16; ++t) {
      Tile& tile = chip.tile(t);
      tile.wait(Engine::CT, tile.record(Engine::NE));
      tile.wait(Engine::CT, tile.record(Engine::WDMA));  // the previous pass's bf16 copy has left
      execute(tile, cgra::ConvertV{Format::FP32, f, acc[pass % 2], out_bf16, kBlock * kBlock});
      tile.wait(Engine::WDMA, tile.record(Engine::CT));
      execute(tile,
              lsu::DmaStore{
                  f,
                  out_bf16,
                  MemLayout::Tensor,
                  {d_ddr, whole, {0, 0, r0 + tile.y() * kBlock, c0 + tile.x() * kBlock}, {1, 1, kBlock, kBlock}}});
      stored[size_t(t * 2 + pass % 2)] = tile.record(Engine::CT);
    }
  }
  const ChipReport report = chip.report();
  const double host = seconds_since(t0);
  const double flops = 2.0 * kSize * kSize * kSize;
  const double ne_bound = flops / (ne_flops_per_cycle(c, f) * 16);
  const double ddr_bound = double(report.ddr_read_bytes + report.ddr_write_bytes) / c.ddr.bytes_per_cycle;
  const double ratio = double(report.total_cycles) / ne_bound;
  uint64_t ne_busy = 0;
  for (const TileReport& tr : report.tiles) ne_busy = std::max(ne_busy, tr.engines[int(Engine::NE)].busy_cycles);
  if (print) {
    std::printf(
        "gemm 4096^3 bf16 on 16 tiles: %llu cycles (%.3f ms simulated), NE-peak bound %.0f (x%.3f), NE busy %llu, "
        "DDR bound %.0f, NoC %.1f MiB; host %.2f s\n",
        (unsigned long long)report.total_cycles, report.seconds * 1e3, ne_bound, ratio, (unsigned long long)ne_busy,
        ddr_bound, double(report.noc_bytes) / (1 << 20), host);
  }
  return {{"m", kSize},
          {"n", kSize},
          {"k", kSize},
          {"format", "bf16"},
          {"tiles", 16},
          {"cycles", report.total_cycles},
          {"ne_bound_cycles", ne_bound},
          {"cycles_over_ne_bound", ratio},
          {"ne_busy_cycles", ne_busy},
          {"within_10_percent", ratio <= 1.10},
          {"ddr_bound_cycles", ddr_bound},
          {"ddr_bytes", report.ddr_read_bytes + report.ddr_write_bytes},
          {"noc_bytes", report.noc_bytes},
          {"hazards", report.hazard_count},
          {"host_seconds", host}};
}

// ---------------------------------------------------------------------------------------------
// copy: DDR-bound.

json run_copy(bool print) {
  constexpr int64_t kBytes = int64_t(128) << 20, kChunk = int64_t(1) << 20;
  Chip chip;
  const ChipConfig& c = chip.config();
  std::mt19937 rng(3);
  std::vector<uint8_t> pattern(static_cast<size_t>(kChunk));
  for (uint8_t& b : pattern) b = uint8_t(rng());
  for (int64_t at = 0; at < kBytes; at += kChunk) chip.ddr().write(uint64_t(at), pattern.data(), pattern.size());
  const auto t0 = std::chrono::steady_clock::now();
  const int tiles = chip.tile_count();
  const int64_t per_tile = kBytes / tiles;
  for (int t = 0; t < tiles; ++t) {
    Tile& tile = chip.tile(t);
    Event freed[2];
    for (int64_t at = 0, i = 0; at < per_tile; at += kChunk, ++i) {
      const uint64_t buf = uint64_t(i % 2) * uint64_t(kChunk), from = uint64_t(t * per_tile + at);
      tile.wait(Engine::RDMA, freed[i % 2]);
      execute(tile, lsu::LoadConst{from, buf, uint64_t(kChunk)});
      tile.wait(Engine::WDMA, tile.record(Engine::RDMA));
      lsu::DmaStore store{Format::INT8,
                          buf,
                          MemLayout::Tensor,
                          {uint64_t(kBytes) + from, {1, 1, 1, kChunk}, {0, 0, 0, 0}, {1, 1, 1, kChunk}}};
      execute(tile, store);
      freed[i % 2] = tile.record(Engine::WDMA);
    }
  }
  const ChipReport report = chip.report();
  const double host = seconds_since(t0);
  const double bound = 2.0 * double(kBytes) / c.ddr.bytes_per_cycle;
  const double ratio = double(report.total_cycles) / bound;
  if (print) {
    std::printf("copy 128 MiB on 16 tiles: %llu cycles, DDR bound %.0f (x%.3f), %.1f GB/s; host %.2f s\n",
                (unsigned long long)report.total_cycles, bound, ratio, 2.0 * double(kBytes) / report.seconds / 1e9,
                host);
  }
  return {{"bytes", kBytes},
          {"tiles", tiles},
          {"cycles", report.total_cycles},
          {"ddr_bound_cycles", bound},
          {"cycles_over_ddr_bound", ratio},
          {"within_10_percent", ratio <= 1.10},
          {"hazards", report.hazard_count},
          {"host_seconds", host}};
}

}  // namespace

json run_sim_decode(bool print);  // sim_decode.cpp

namespace {

void run_suite(bool json_out, const std::string& only) {
  json out = {{"suite", "sim"}};
  const bool print = !json_out;
  auto want = [&](const char* s) { return only.empty() || only == s; };
  if (want("ops")) out["ops"] = run_ops(print);
  if (want("copy")) out["copy"] = run_copy(print);
  if (want("decode")) out["decode"] = run_sim_decode(print);
  if (want("gemm")) out["gemm"] = run_gemm(print);
  if (json_out) std::printf("%s\n", out.dump(2).c_str());
}

}  // namespace

void add_sim_suite(CLI::App& app) {
  auto json_out = std::make_shared<bool>(false);
  auto only = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("sim",
                                 "TX8 C-model: oplib ops, a 4096^3 GEMM on 16 tiles, a DDR-bound copy and a llama "
                                 "decode step, simulated cycles against rooflines and host time");
  cmd->add_flag("--json", *json_out, "Print one JSON object instead of the tables");
  cmd->add_option("--only", *only, "Run one section")->check(CLI::IsMember({"ops", "gemm", "copy", "decode"}));
  cmd->callback([=] { run_suite(*json_out, *only); });
}

}  // namespace tg::bench
