#pragma once
// How the ops order their engines on the schedule (docs/sim.md, "Op library"): an op's engines
// start after the tile's loads and stores issued before it (its inputs are in; the buffers it
// overwrites have left), and within an op an engine that reads what another wrote waits for it.
// The instructions' functional work is sequential anyway; these waits make the schedule's cycles
// those of a correct program.
#include <initializer_list>

#include "tilegraph/sim/chip.h"

namespace tg::sim::oplib::detail {

// `to`'s next instruction waits for everything issued so far to each of `from`.
inline void order(Tile& tile, std::initializer_list<Engine> from, Engine to) {
  for (Engine e : from) tile.wait(to, tile.record(e));
}

// An op's compute engines wait for the loads and stores issued before it.
inline void after_transfers(Tile& tile) {
  for (Engine e : {Engine::NE, Engine::CT, Engine::TDMA}) order(tile, {Engine::RDMA, Engine::WDMA}, e);
}

}  // namespace tg::sim::oplib::detail
