// `tilegraph sim`: the TX8 C-model (docs/sim.md). `sim info` prints the chip a configuration
// describes and the peaks derived from it; `sim gemm` runs a GEMM split over every tile on the
// model, checks rows of it against the core reference and reports cycles against the rooflines.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "commands.h"
#include "tilegraph/core/context.h"
#include "tilegraph/core/error.h"
#include "tilegraph/core/ops.h"
#include "tilegraph/core/reference.h"
#include "tilegraph/sim/chip_config.h"
#include "tilegraph/sim/lsu.h"
#include "tilegraph/sim/ne.h"
#include "tilegraph/sim/trace.h"

namespace tg::cli {

namespace {

sim::ChipConfig config_from(const std::string& path) {
  return path.empty() ? sim::ChipConfig{} : sim::load_chip_config(path);
}

void print_info(const sim::ChipConfig& c, bool json) {
  const sim::ChipPeaks p = sim::derive_peaks(c);
  if (json) {
    const nlohmann::json out = {{"config", sim::to_json(c)}, {"peaks", sim::to_json(p)}};
    std::printf("%s\n", out.dump(2).c_str());
    return;
  }
  std::printf("TX8 chip model: %dx%d mesh (%d tiles) at %.4f MHz\n", c.mesh_x, c.mesh_y, c.tile_count(), c.clock_mhz);
  std::printf("per tile:  %d NE PE arrays (8x16x8 per step), CGRA %d lanes, SPM %.2f MiB\n", c.ne.arrays_per_tile,
              c.cgra.lanes, p.spm_mib_per_tile);
  std::printf("peaks:     INT8 %.1f TOPS, FP16 %.1f TFLOPS, BF16 %.1f TFLOPS, TF32 %.1f TFLOPS, FP32 %.1f TFLOPS\n",
              p.int8_tops, p.fp16_tflops, p.bf16_tflops, p.tf32_tflops, p.fp32_tflops);
  std::printf("DDR:       %.1f GB/s shared, %.1f GiB\n", p.ddr_gb_per_s, p.ddr_gib);
  std::printf("NoC:       %.1f GB/s per link direction, %d cycles per hop\n",
              c.noc.link_bytes_per_cycle * c.clock_mhz / 1e3, c.noc.hop_latency_cycles);
  std::printf("DMA:       RDMA %.1f GB/s, WDMA %.1f GB/s, TDMA %.1f GB/s, DTE %.1f GB/s per tile\n",
              c.rdma.bytes_per_cycle * c.clock_mhz / 1e3, c.wdma.bytes_per_cycle * c.clock_mhz / 1e3,
              c.tdma.bytes_per_cycle * c.clock_mhz / 1e3, c.dte.bytes_per_cycle * c.clock_mhz / 1e3);
}

struct GemmOptions {
  std::string config;
  std::string trace;
  std::string dtype = "bf16";
  int64_t m = 1024, n = 1024, k = 1024, kc = 256;
  int check_rows = 4;
  bool json = false;
};

// D[M][N] (f32) = A[M][K] . W[N][K]^T with A, W in DDR. Tile (x, y) owns the block of rows
// y*M/mesh_y and columns x*N/mesh_x, cut into row strips that fit its SPM; per strip it streams K
// blocks of A and W into two buffers (RDMA) while the NE multiplies the other pair, then stores
// the strip (WDMA).
void run_split_gemm(sim::Chip& chip, const GemmOptions& o, sim::Format format, uint64_t a_addr, uint64_t w_addr,
                    uint64_t d_addr) {
  using namespace sim;
  const ChipConfig& c = chip.config();
  if (o.m % c.mesh_y || o.n % c.mesh_x) {
    throw Error("sim gemm: M = " + std::to_string(o.m) + " and N = " + std::to_string(o.n) + " must divide by the " +
                std::to_string(c.mesh_y) + " rows and " + std::to_string(c.mesh_x) + " columns of the mesh");
  }
  if (o.k % o.kc)
    throw Error("sim gemm: K = " + std::to_string(o.k) + " is not a multiple of --kc " + std::to_string(o.kc));
  const int64_t mb = o.m / c.mesh_y, nb = o.n / c.mesh_x;
  const uint64_t eb = format_bytes(format);
  auto spm_needed = [&](int64_t rows) { return uint64_t(rows * nb) * 4 + 2 * uint64_t((rows + nb) * o.kc) * eb; };
  int64_t rows = mb;
  while (spm_needed(rows) > c.spm_bytes && rows % 2 == 0) rows /= 2;
  if (spm_needed(rows) > c.spm_bytes) {
    throw Error("sim gemm: a strip of " + std::to_string(rows) + " x " + std::to_string(nb) + " with K blocks of " +
                std::to_string(o.kc) + " needs " + std::to_string(spm_needed(rows)) + " bytes of SPM, the tile has " +
                std::to_string(c.spm_bytes) + " (try a smaller --kc)");
  }
  const Shape4 a_whole{1, 1, o.m, o.k}, w_whole{1, 1, o.n, o.k}, d_whole{1, 1, o.m, o.n};
  for (int t = 0; t < chip.tile_count(); ++t) {
    Tile& tile = chip.tile(t);
    const int64_t n0 = tile.x() * nb;
    const uint64_t acc = 0, buffer0 = uint64_t(rows * nb) * 4, buffer_bytes = uint64_t((rows + nb) * o.kc) * eb;
    Event used[2];
    for (int64_t m0 = tile.y() * mb; m0 < (tile.y() + 1) * mb; m0 += rows) {
      tile.wait(Engine::NE, tile.record(Engine::WDMA));  // the previous strip has left the accumulator
      for (int64_t k0 = 0, step = 0; k0 < o.k; k0 += o.kc, ++step) {
        const uint64_t a = buffer0 + uint64_t(step % 2) * buffer_bytes, w = a + uint64_t(rows * o.kc) * eb;
        tile.wait(Engine::RDMA, used[step % 2]);
        execute(tile,
                lsu::LoadVar{format, {a_addr, a_whole, {0, 0, m0, k0}, {1, 1, rows, o.kc}}, a, MemLayout::Tensor});
        execute(tile, lsu::LoadVar{format, {w_addr, w_whole, {0, 0, n0, k0}, {1, 1, nb, o.kc}}, w, MemLayout::Tensor});
        tile.wait(Engine::NE, tile.record(Engine::RDMA));
        execute(tile, ne::Gemm{format, a, w, acc, rows, nb, o.kc, true, step > 0});
        used[step % 2] = tile.record(Engine::NE);
      }
      tile.wait(Engine::WDMA, tile.record(Engine::NE));
      execute(tile,
              lsu::DmaStore{Format::FP32, acc, MemLayout::Tensor, {d_addr, d_whole, {0, 0, m0, n0}, {1, 1, rows, nb}}});
    }
  }
}

void run_gemm(const GemmOptions& o) {
  using namespace sim;
  const Format format = parse_format(o.dtype);
  if (!is_float_format(format)) throw Error("sim gemm: --dtype takes fp32, tf32, fp16 or bf16");
  if (o.m <= 0 || o.n <= 0 || o.k <= 0 || o.kc <= 0) throw Error("sim gemm: sizes must be positive");
  Chip chip(config_from(o.config));
  // Random inputs in [-1, 1), rounded to the format.
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  auto make = [&](int64_t count) {
    std::vector<float> v(static_cast<size_t>(count));
    for (float& x : v) x = round_to(format, dist(rng));
    return v;
  };
  const std::vector<float> a = make(o.m * o.k), w = make(o.n * o.k);
  const uint64_t eb = format_bytes(format);
  const uint64_t a_addr = 0, w_addr = a.size() * eb, d_addr = w_addr + w.size() * eb;
  std::vector<uint8_t> bytes(std::max(a.size(), w.size()) * eb);
  from_f32(format, a.data(), bytes.data(), int64_t(a.size()), RoundMode::NearestEven);
  chip.ddr().write(a_addr, bytes.data(), a.size() * eb);
  from_f32(format, w.data(), bytes.data(), int64_t(w.size()), RoundMode::NearestEven);
  chip.ddr().write(w_addr, bytes.data(), w.size() * eb);

  const auto start = std::chrono::steady_clock::now();
  run_split_gemm(chip, o, format, a_addr, w_addr, d_addr);
  const ChipReport report = chip.report();
  const double host_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  // Rows spread over M against the reference's mul_mat.
  double max_error = 0;
  const int rows = int(std::min<int64_t>(o.check_rows, o.m));
  for (int r = 0; r < rows; ++r) {
    const int64_t row = rows > 1 ? r * (o.m - 1) / (rows - 1) : 0;
    Context ctx;
    Tensor* wt = ctx.new_tensor(DType::F32, {o.k, o.n});
    Tensor* ar = ctx.new_tensor(DType::F32, {o.k, 1});
    std::copy(w.begin(), w.end(), static_cast<float*>(wt->data));
    std::copy_n(a.begin() + row * o.k, o.k, static_cast<float*>(ar->data));
    Tensor* ref = mul_mat(ctx, wt, ar);
    reference::compute_node(*ref);
    std::vector<float> got(static_cast<size_t>(o.n));
    chip.ddr().read(d_addr + uint64_t(row * o.n) * 4, got.data(), got.size() * 4);
    for (int64_t j = 0; j < o.n; ++j)
      max_error = std::max(max_error, double(std::fabs(got[size_t(j)] - static_cast<float*>(ref->data)[j])));
  }
  const double tolerance = 1e-5 * double(o.k);
  if (max_error > tolerance) {
    throw Error("sim gemm: checked rows differ from the reference by " + std::to_string(max_error) + " (tolerance " +
                std::to_string(tolerance) + ")");
  }
  if (report.hazard_count) {
    throw Error("sim gemm: the program has " + std::to_string(report.hazard_count) +
                " data hazards, the first: " + report.hazards[0]);
  }
  if (!o.trace.empty()) write_trace(chip, o.trace);

  const ChipConfig& c = chip.config();
  const double flops = 2.0 * double(o.m) * double(o.n) * double(o.k);
  const double peak = format == Format::FP32 ? derive_peaks(c).fp32_tflops : derive_peaks(c).bf16_tflops;
  const double ne_bound = flops / (peak * 1e12) * c.clock_mhz * 1e6;
  const double ddr_bytes = double(report.ddr_read_bytes + report.ddr_write_bytes);
  const double ddr_bound = ddr_bytes / c.ddr.bytes_per_cycle;
  const double achieved = flops / report.seconds / 1e12;
  if (o.json) {
    const nlohmann::json out = {{"m", o.m},
                                {"n", o.n},
                                {"k", o.k},
                                {"kc", o.kc},
                                {"dtype", o.dtype},
                                {"host_seconds", host_seconds},
                                {"ne_bound_cycles", ne_bound},
                                {"ddr_bound_cycles", ddr_bound},
                                {"tflops", achieved},
                                {"checked_rows", rows},
                                {"max_abs_error", max_error},
                                {"report", to_json(report)}};
    std::printf("%s\n", out.dump(2).c_str());
    return;
  }
  std::printf("gemm %lld x %lld x %lld %s over %d tiles (K blocks of %lld)\n", (long long)o.m, (long long)o.n,
              (long long)o.k, o.dtype.c_str(), c.tile_count(), (long long)o.kc);
  std::printf("simulated: %llu cycles (%.3f ms), %.1f TFLOPS; %llu instructions, %.1f s on the host\n",
              (unsigned long long)report.total_cycles, report.seconds * 1e3, achieved,
              (unsigned long long)report.instructions, host_seconds);
  std::printf("rooflines: NE peak %.0f cycles, DDR %.0f cycles (%.1f MB moved)\n", ne_bound, ddr_bound,
              ddr_bytes / 1e6);
  std::printf("checked:   %d rows against the reference, max |error| %.3g\n", rows, max_error);
  if (!o.trace.empty()) std::printf("trace:     %s\n", o.trace.c_str());
}

}  // namespace

void add_sim_command(CLI::App& app) {
  auto* sim = app.add_subcommand("sim", "The TX8 chip model (C-model): its configuration, peaks, and a GEMM run on it");
  sim->require_subcommand(1);

  struct InfoOptions {
    std::string config;
    bool json = false;
  };
  auto info_options = std::make_shared<InfoOptions>();
  auto* info = sim->add_subcommand("info", "Print the chip a configuration describes and its derived peak figures");
  info->add_option("--config", info_options->config, "Chip configuration JSON (default: the TX8 defaults)");
  info->add_flag("--json", info_options->json, "Print one JSON object: the full configuration and the peaks");
  info->callback([info_options] { print_info(config_from(info_options->config), info_options->json); });

  auto gemm_options = std::make_shared<GemmOptions>();
  auto* gemm = sim->add_subcommand("gemm", "Run a GEMM split over every tile on the model, check it and report cycles");
  gemm->add_option("--m", gemm_options->m, "Rows of A and D")->capture_default_str();
  gemm->add_option("--n", gemm_options->n, "Columns of D (rows of the N x K weight)")->capture_default_str();
  gemm->add_option("--k", gemm_options->k, "Inner dimension")->capture_default_str();
  gemm->add_option("--kc", gemm_options->kc, "K block of each NE instruction")->capture_default_str();
  gemm->add_option("--dtype", gemm_options->dtype, "Input format: bf16, fp16, tf32 or fp32")->capture_default_str();
  gemm->add_option("--check-rows", gemm_options->check_rows, "Rows of D checked against the core reference")
      ->capture_default_str();
  gemm->add_option("--config", gemm_options->config, "Chip configuration JSON (default: the TX8 defaults)");
  gemm->add_option("--trace", gemm_options->trace, "Write the schedule as a Chrome/Perfetto trace to this file");
  gemm->add_flag("--json", gemm_options->json, "Print one JSON object with the report");
  gemm->callback([gemm_options] { run_gemm(*gemm_options); });
}

}  // namespace tg::cli
