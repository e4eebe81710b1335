#pragma once
// A simulated TX8 chip: the tiles, their SPMs, the shared DDR, and the timeline of every
// instruction issued so far.
//
// A program is C++ that issues instructions (cgra.h, ne.h, lsu.h, dte.h) to tiles with
// `execute(tile, instruction)`. Each call does the instruction's work at once, on the host, and
// returns its cost in cycles as if it ran alone (the TX8 oplib's TsmExecute); the host order of
// the calls must therefore be an order in which the program is correct sequentially.
//
// When the instructions run on the chip is worked out separately, from the dependencies the
// program states, as a compiler emits them:
//   - an engine runs its instructions in the order they were issued to it;
//   - engines of a tile run side by side unless told to wait: `tile.wait(engine, event)`, with
//     an event from `record` (any tile's), `tile.fence()`, or the chip-wide `chip.barrier()`;
//   - DMA, DTE and NoC transfers that run at the same time share the DDR bandwidth and each
//     mesh link's bandwidth fairly (max-min), so the result does not depend on the order in
//     which tile programs were issued.
// `report()` and `timeline()` run that schedule (docs/sim.md, "Timing").
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "tilegraph/sim/chip_config.h"
#include "tilegraph/sim/engine.h"
#include "tilegraph/sim/memory.h"

namespace tg::sim {

class Chip;

// The completion of one instruction, fence or barrier. A default Event has already happened.
struct Event {
  int64_t id = -1;
};

class Tile {
 public:
  Tile(Chip& chip, int index);

  int index() const { return index_; }
  int x() const;  // column in the mesh
  int y() const;  // row
  Chip& chip() { return *chip_; }
  const ChipConfig& config() const;
  Spm& spm();
  const Spm& spm() const;

  // The completion of the last instruction issued to `engine` of this tile so far.
  Event record(Engine engine) const;
  // The next instruction issued to `engine` starts only after `event` (of any tile).
  void wait(Engine engine, Event event);
  // Every engine of this tile waits for everything issued to the tile so far.
  void fence();

  // Groups the instructions issued between begin_op and end_op into one op slice of the trace
  // (an oplib function, e.g. "op_batchnorm_inference"). Ops do not nest.
  void begin_op(std::string name);
  void end_op();

 private:
  Chip* chip_;
  int index_;
};

struct EngineReport {
  uint64_t busy_cycles = 0;  // sum of the engine's instruction durations on the schedule
  uint64_t instructions = 0;
  uint64_t cost_cycles = 0;  // sum of the cycles `execute` returned (each as if alone)
};

struct TileReport {
  std::array<EngineReport, kEngineCount> engines;
  uint64_t spm_high_water = 0;  // bytes
};

struct ChipReport {
  uint64_t total_cycles = 0;  // when the last instruction finishes
  double seconds = 0;         // total_cycles at the configured clock
  uint64_t instructions = 0;
  uint64_t ddr_read_bytes = 0;   // DDR -> SPM payload
  uint64_t ddr_write_bytes = 0;  // SPM -> DDR payload
  uint64_t noc_bytes = 0;        // DTE payload
  uint64_t noc_link_bytes = 0;   // payload times the links it crossed
  std::vector<TileReport> tiles;
  // Data hazards: pairs of instructions on different engines that touch the same SPM bytes, at
  // least one writing, with no chain of waits, fences or barriers ordering them as they were
  // issued (a missing wait). The results are the issue order's; the chip's could differ. The
  // first few, described.
  uint64_t hazard_count = 0;
  std::vector<std::string> hazards;
};
nlohmann::json to_json(const ChipReport& report);

// One instruction (or op) as scheduled.
struct TimelineEntry {
  int tile = 0;
  Engine engine = Engine::CT;
  std::string name;  // "CGRATensor_ArithOp_VS_add.fp32"
  double start = 0;  // cycles
  double end = 0;
  uint64_t cost_cycles = 0;  // what execute returned
  uint64_t ddr_bytes = 0;
  uint64_t noc_bytes = 0;
};
struct OpSpan {
  int tile = 0;
  std::string name;
  double start = 0, end = 0;
  uint64_t cost_cycles = 0;  // sum over its instructions
};

class Chip {
 public:
  explicit Chip(ChipConfig config = {});
  ~Chip();
  Chip(const Chip&) = delete;
  Chip& operator=(const Chip&) = delete;

  const ChipConfig& config() const { return config_; }
  int tile_count() const { return int(tiles_.size()); }
  Tile& tile(int index);
  Tile& tile(int x, int y);
  Ddr& ddr();
  const Ddr& ddr() const;
  // XY-routed mesh hops between two tiles.
  int hops(int from_tile, int to_tile) const;

  // Every engine of every tile waits for everything issued to the chip so far.
  void barrier();

  // Runs the schedule over everything issued so far (cached until the next issue).
  ChipReport report();
  // The host waits for the chip, as before it reads results: everything issued so far finishes,
  // and what is issued later starts after it. The settled instructions are forgotten except as
  // totals in report() (their timeline, op spans and counters go), which bounds the memory and
  // the scheduling time of a long run such as a decode, one settle per program run. Marks and
  // events stay valid; a report_window from before the settle does not.
  void settle();
  // A point in the issue order: the number of instructions, fences and barriers issued so far.
  uint64_t mark() const;
  // The report of what was issued between two marks (`to` = kNow: up to now) on the same
  // schedule as report(): total_cycles from the first of those instructions starting to the last
  // ending, counts, bytes and busy cycles of those only, the hazards whose later instruction is
  // one of them; spm_high_water as report() (the SPM's, not the window's). A program run on a
  // chip that has run others reports itself this way.
  static constexpr uint64_t kNow = ~uint64_t(0);
  ChipReport report_window(uint64_t from, uint64_t to = kNow);
  const std::vector<TimelineEntry>& timeline();
  const std::vector<OpSpan>& ops();
  // Cumulative DDR and NoC payload bytes at each time the transfers' rates change, for traces
  // (since the last settle, as timeline() and ops()).
  struct CounterSample {
    double time;
    double ddr_bytes;
    double noc_bytes;
  };
  const std::vector<CounterSample>& counters();

  // The simulator's own state, used by the instruction implementations.
  struct State;
  State& state() { return *state_; }

 private:
  ChipConfig config_;
  std::unique_ptr<State> state_;
  std::vector<Tile> tiles_;
};

}  // namespace tg::sim
