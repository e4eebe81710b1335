#include "tilegraph/sim/trace.h"

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tilegraph/core/error.h"

namespace tg::sim {

namespace {

constexpr int kOpsThread = kEngineCount;  // the tile's ops track, after its engines

}  // namespace

nlohmann::json trace_json(Chip& chip) {
  using nlohmann::json;
  const double mhz = chip.config().clock_mhz;  // cycles per microsecond
  const int chip_pid = chip.tile_count();      // the process holding the chip-wide counters
  json events = json::array();
  for (int t = 0; t < chip.tile_count(); ++t) {
    const Tile& tile = chip.tile(t);
    events.push_back({{"name", "process_name"},
                      {"ph", "M"},
                      {"pid", t},
                      {"tid", 0},
                      {"args",
                       {{"name", "tile " + std::to_string(t) + " (x " + std::to_string(tile.x()) + ", y " +
                                     std::to_string(tile.y()) + ")"}}}});
    events.push_back(
        {{"name", "process_sort_index"}, {"ph", "M"}, {"pid", t}, {"tid", 0}, {"args", {{"sort_index", t}}}});
    for (int e = 0; e <= kEngineCount; ++e) {
      const std::string name = e == kOpsThread ? "ops" : std::string(engine_name(Engine(e)));
      events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", t}, {"tid", e}, {"args", {{"name", name}}}});
      events.push_back(
          {{"name", "thread_sort_index"}, {"ph", "M"}, {"pid", t}, {"tid", e}, {"args", {{"sort_index", e}}}});
    }
  }
  events.push_back(
      {{"name", "process_name"}, {"ph", "M"}, {"pid", chip_pid}, {"tid", 0}, {"args", {{"name", "chip"}}}});
  for (const TimelineEntry& entry : chip.timeline()) {
    events.push_back({{"name", entry.name},
                      {"cat", std::string(engine_name(entry.engine))},
                      {"ph", "X"},
                      {"ts", entry.start / mhz},
                      {"dur", (entry.end - entry.start) / mhz},
                      {"pid", entry.tile},
                      {"tid", int(entry.engine)},
                      {"args",
                       {{"start_cycle", entry.start},
                        {"end_cycle", entry.end},
                        {"cycles_alone", entry.cost_cycles},
                        {"ddr_bytes", entry.ddr_bytes},
                        {"noc_bytes", entry.noc_bytes}}}});
  }
  for (const OpSpan& op : chip.ops()) {
    events.push_back(
        {{"name", op.name},
         {"cat", "op"},
         {"ph", "X"},
         {"ts", op.start / mhz},
         {"dur", (op.end - op.start) / mhz},
         {"pid", op.tile},
         {"tid", kOpsThread},
         {"args", {{"start_cycle", op.start}, {"end_cycle", op.end}, {"instruction_cycles", op.cost_cycles}}}});
  }
  for (const Chip::CounterSample& s : chip.counters()) {
    events.push_back({{"name", "DDR bytes"},
                      {"ph", "C"},
                      {"ts", s.time / mhz},
                      {"pid", chip_pid},
                      {"args", {{"bytes", s.ddr_bytes}}}});
    events.push_back({{"name", "NoC bytes"},
                      {"ph", "C"},
                      {"ts", s.time / mhz},
                      {"pid", chip_pid},
                      {"args", {{"bytes", s.noc_bytes}}}});
  }
  const ChipReport report = chip.report();
  return {{"traceEvents", events},
          {"displayTimeUnit", "ns"},
          {"otherData", {{"clock_mhz", mhz}, {"total_cycles", report.total_cycles}, {"tiles", chip.tile_count()}}}};
}

void write_trace(Chip& chip, const std::string& path) {
  const std::string text = trace_json(chip).dump();
  std::ofstream out(path, std::ios::binary);
  if (!out) throw Error("trace: cannot open '" + path + "' for writing");
  out << text << '\n';
  out.flush();
  if (!out) throw Error("trace: writing '" + path + "' failed");
}

}  // namespace tg::sim
