#include "tilegraph/sim/dte.h"

#include <cstring>
#include <vector>

#include "instruction_util.h"

namespace tg::sim::dte {

std::string instruction_name(const Copy&) { return "DTE_copy"; }

uint64_t execute(Tile& tile, const Copy& in) {
  const std::string name = detail::begin(tile, instruction_name(in));
  Chip& chip = tile.chip();
  if (in.dst_tile < 0 || in.dst_tile >= chip.tile_count()) {
    detail::fail(tile, name,
                 "destination tile " + std::to_string(in.dst_tile) + " does not exist (the chip has " +
                     std::to_string(chip.tile_count()) + " tiles)");
  }
  if (in.dst_tile == tile.index())
    detail::fail(tile, name, "the destination is the issuing tile (use op_gatherScatter)");
  const uint8_t* src = tile.spm().read_span(name, in.src, in.bytes);
  std::memcpy(chip.tile(in.dst_tile).spm().write_span(name, in.dst, in.bytes), src, in.bytes);
  const ChipConfig& c = tile.config();
  Work work;
  work.links = chip.state().route(tile.index(), in.dst_tile);
  work.latency = uint64_t(c.dte.latency_cycles) + uint64_t(c.noc.hop_latency_cycles) * work.links.size();
  work.bytes = double(in.bytes);
  work.rate_cap = c.dte.bytes_per_cycle;
  work.noc_bytes = in.bytes;
  return detail::issue(tile, Engine::DTE, name, std::move(work));
}

}  // namespace tg::sim::dte
