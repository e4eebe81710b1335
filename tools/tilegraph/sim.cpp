// `tilegraph sim`: the TX8 C-model (docs/sim.md). `sim info` prints the chip a configuration
// describes and the peaks derived from it.
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "commands.h"
#include "tilegraph/sim/chip_config.h"

namespace tg::cli {

namespace {

sim::ChipConfig config_from(const std::string& path) { return path.empty() ? sim::ChipConfig{} : sim::load_chip_config(path); }

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

}  // namespace

void add_sim_command(CLI::App& app) {
  auto* sim = app.add_subcommand("sim", "The TX8 chip model (C-model): its configuration and peaks");
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
}

}  // namespace tg::cli
