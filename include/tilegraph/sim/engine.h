#pragma once
// The engines of a tile (the TX8 toolchain's instruction types). Each has its own timeline: an
// engine runs its instructions one at a time in issue order, and engines run side by side.
#include <cstdint>
#include <string_view>

namespace tg::sim {

enum class Engine : int32_t {
  NE,    // neural engine: GEMM and convolution on the PE arrays
  CT,    // CGRA tensor unit: vector arithmetic, activations, reductions, conversions
  RDMA,  // LSU read DMA: DDR -> SPM
  WDMA,  // LSU write DMA: SPM -> DDR
  TDMA,  // LSU tensor DMA: SPM -> SPM within the tile (reshape, gather-scatter)
  DTE,   // data transfer engine: SPM -> another tile's SPM over the NoC
};
inline constexpr int kEngineCount = 6;

std::string_view engine_name(Engine engine);  // "NE", "CT", "RDMA", "WDMA", "TDMA", "DTE"

}  // namespace tg::sim
