#pragma once
// The chip a simulation runs: a mesh of tiles joined by a NoC and sharing DDR, each tile with its
// SPM and engines (docs/sim.md, "Configuration"). Defaults reproduce the TX8 chip's published
// figures; a JSON file overrides any subset of them.
#include <cstdint>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "tilegraph/sim/format.h"

namespace tg::sim {

struct NeConfig {
  int arrays_per_tile = 4;  // PE arrays; each does one 8x16x8 product (2048 flop) per step
  // Cycles per step of one array, per input format: int8 runs two steps a cycle, fp32 a step
  // every six cycles (its multiplier is split over the bf16 datapath).
  double cycles_per_step_int8 = 0.5;
  double cycles_per_step_fp16 = 1.0;
  double cycles_per_step_bf16 = 1.0;
  double cycles_per_step_tf32 = 1.0;
  double cycles_per_step_fp32 = 6.0;
  int latency_cycles = 64;  // pipeline fill, load of the first operands and the post-processing drain
};

struct CgraConfig {
  int lanes = 64;                 // 32-bit lanes: 64 fp32, 128 fp16/bf16 or 256 int8 elements a cycle (2048 bits)
  int latency_cycles = 16;        // instruction set-up and pipeline fill
  int transcendental_cycles = 4;  // passes per vector of exp, log, rsqrt, recip, sigmoid, tanh, gelu, silu, div, sqrt
};

struct DmaConfig {
  double bytes_per_cycle = 64;  // the engine's own limit; DDR traffic also shares the DDR bandwidth
  int latency_cycles = 256;     // request to first byte
};

struct NocConfig {
  double link_bytes_per_cycle = 128;  // each direction of each mesh link
  int hop_latency_cycles = 8;
};

struct DdrConfig {
  uint64_t bytes = 64ull << 30;
  double bytes_per_cycle = 204.8;  // shared by all tiles: 200 GB/s at the default clock
  uint64_t burst_bytes = 64;       // each contiguous run of a transfer is rounded up to bursts
};

struct ChipConfig {
  int mesh_x = 4;  // tiles per row
  int mesh_y = 4;  // rows
  double clock_mhz = 976.5625;
  uint64_t spm_bytes = 4ull << 20;  // per tile
  NeConfig ne;
  CgraConfig cgra;
  DmaConfig rdma;                                                // DDR -> SPM
  DmaConfig wdma;                                                // SPM -> DDR
  DmaConfig tdma{.bytes_per_cycle = 128, .latency_cycles = 16};  // SPM -> SPM, one tile
  DmaConfig dte{.bytes_per_cycle = 64, .latency_cycles = 64};    // SPM -> SPM, over the NoC
  NocConfig noc;
  DdrConfig ddr;

  int tile_count() const { return mesh_x * mesh_y; }
  // Cycles of one NE step for an input format (throws for formats the NE does not take).
  double ne_cycles_per_step(Format format) const;
  // Throws tg::Error naming the key of the first invalid value.
  void validate() const;
};

// The chip's headline figures, derived from a configuration.
struct ChipPeaks {
  double int8_tops;
  double fp16_tflops;
  double bf16_tflops;
  double tf32_tflops;
  double fp32_tflops;
  double ddr_gb_per_s;  // 10^9 bytes per second
  double ddr_gib;       // 2^30 bytes
  double spm_mib_per_tile;
  double spm_mib_total;
};
ChipPeaks derive_peaks(const ChipConfig& config);

// Every key is optional; unknown keys, wrong types and invalid values are errors naming the key
// ("ne.arrays_per_tile: expected a positive integer, got -1").
ChipConfig chip_config_from_json(const nlohmann::json& json);
// Reads a JSON file; errors name the file and the key.
ChipConfig load_chip_config(const std::string& path);
nlohmann::json to_json(const ChipConfig& config);
nlohmann::json to_json(const ChipPeaks& peaks);

}  // namespace tg::sim
