#pragma once
// The schedule as a Chrome trace (the Trace Event Format that ui.perfetto.dev and
// chrome://tracing open): one process per tile, one thread per engine plus one for the tile's ops,
// a complete event ("ph": "X") per instruction, timestamps in microseconds at the configured
// clock, and DDR and NoC cumulative bytes as counters ("ph": "C"). docs/sim.md, "Reading a trace".
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "tilegraph/sim/chip.h"

namespace tg::sim {

nlohmann::json trace_json(Chip& chip);
// Writes trace_json(chip) to `path`; throws tg::Error if the file cannot be written.
void write_trace(Chip& chip, const std::string& path);

}  // namespace tg::sim
