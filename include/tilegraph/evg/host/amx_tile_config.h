#pragma once
// The 64-byte operand of LDTILECFG in palette 1 (Intel SDM, "Tile configuration"): per tile
// register its rows and bytes per row. Data only, shared by the AMX kernels of every layer (the
// GEMM's bf16 tiles, the CPU backend's integer tiles).
#include <cstdint>

namespace tg::evg::host {

struct alignas(64) AmxTileConfig {
  uint8_t palette = 1, start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t bytes_per_row[16] = {};
  uint8_t rows[16] = {};
};
static_assert(sizeof(AmxTileConfig) == 64);

}  // namespace tg::evg::host
