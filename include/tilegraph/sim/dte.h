#pragma once
// The DTE's instruction: bytes from this tile's SPM to another tile's SPM over the NoC, XY-routed
// (along the row first, then the column). Cost: latency + hops x hop latency + bytes / bandwidth,
// the bandwidth being the DTE's own, shared on the schedule with every transfer crossing the same
// links. The destination must be another tile.
#include <cstdint>
#include <string>

#include "tilegraph/sim/chip.h"

namespace tg::sim::dte {

struct Copy {
  uint64_t src = 0;  // in the issuing tile's SPM
  int dst_tile = 0;
  uint64_t dst = 0;
  uint64_t bytes = 0;
};

uint64_t execute(Tile& tile, const Copy& instr);
std::string instruction_name(const Copy& instr);  // "DTE_copy"

}  // namespace tg::sim::dte
