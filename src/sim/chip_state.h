#pragma once
// The chip's state behind tilegraph/sim/chip.h: memories, the instructions issued so far with
// their dependencies and demands, and the schedule worked out from them.
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tilegraph/sim/chip.h"

namespace tg::sim {

// What an instruction asks of the chip once it starts: `latency` cycles on its engine, then
// `bytes` moved at up to `rate_cap` bytes a cycle, sharing DDR and the NoC links it crosses with
// every other transfer in flight. A compute instruction moves no bytes.
struct Work {
  uint64_t latency = 0;
  double bytes = 0;
  double rate_cap = 0;
  bool uses_ddr = false;
  std::vector<int> links;                                           // NoC link ids (Chip::State::link_id)
  uint64_t ddr_read_bytes = 0, ddr_write_bytes = 0, noc_bytes = 0;  // payload, for the report
};

struct Instruction {
  int tile = 0;
  Engine engine = Engine::CT;
  bool sync = false;  // a fence or barrier: no engine, no duration
  std::string name;
  Work work;
  uint64_t cost = 0;  // cycles as if alone
  int op = -1;        // index into State::op_names
  std::vector<int64_t> deps;
};

// Two instructions that touch the same SPM bytes, one of them writing: the schedule must run
// `later` (in issue order) after `earlier` has finished, or the chip would compute something else
// than the issue order did.
struct Ordering {
  enum Kind : char { kReadAfterWrite, kWriteAfterRead, kWriteAfterWrite };
  int64_t earlier, later;
  int tile;
  uint64_t begin, end;
  Kind kind;
};

// Who last wrote a range of one tile's SPM, and who has read it since.
struct SpmSegment {
  uint64_t end = 0;
  int64_t writer = -1;  // -1: the host, or nothing
  std::vector<int64_t> readers;
};

struct Chip::State {
  State(const ChipConfig& config);

  // Records an instruction of `tile` on `engine` and returns its cost as if it ran alone.
  uint64_t issue(int tile, Engine engine, std::string name, Work work);
  // A zero-time node that waits for `deps` and that the next instruction of every engine of
  // `tiles` waits for.
  void sync_node(std::vector<int64_t> deps, const std::vector<int>& tiles, std::string name);
  uint64_t cost_alone(const Work& work) const;
  // The links an XY route from one tile to another crosses.
  std::vector<int> route(int from_tile, int to_tile) const;
  int link_id(int tile, int direction) const { return 1 + tile * 4 + direction; }
  void schedule();  // fills the fields below from `nodes` when `dirty`
  // Counts and describes in `out` the orderings no dependency enforces whose later instruction
  // is in [first, last) (part of schedule() for all of them, and of report_window).
  void check_hazards(ChipReport& out, int64_t first, int64_t last) const;
  // The report of nodes [first, last) on the current schedule; its total_cycles from cycle 0 when
  // `from_start` (the whole chip's), else from the first of them starting.
  ChipReport window_report(int64_t first, int64_t last, bool from_start) const;
  // Everything issued so far finished (Chip::settle).
  void settle();
  // Records the orderings the SPM accesses of node `id` (in `accesses`) require.
  void track_accesses(int64_t id);

  ChipConfig config;
  std::vector<Spm> spms;
  Ddr ddr;
  std::vector<Instruction> nodes;
  std::vector<std::array<int64_t, kEngineCount>> last;                  // per tile, per engine
  std::vector<std::array<std::vector<int64_t>, kEngineCount>> pending;  // waits for the next issue
  std::vector<int> open_op;                                             // per tile, -1 when none
  std::vector<std::pair<int, std::string>> op_names;                    // (tile, name) per op
  std::vector<SpmAccess> accesses;                                      // of the instruction being executed (Spm's log)
  std::vector<std::map<uint64_t, SpmSegment>> spm_users;                // per tile, keyed by segment start
  std::vector<Ordering> orderings;

  // What settle() forgot: the marks before `nodes` (node i is mark settled + i), the cycle the
  // forgotten instructions had all finished by (nothing starts earlier), and their report.
  int64_t settled = 0;
  double origin = 0;
  ChipReport settled_report;

  bool dirty = true;
  std::vector<double> start, end;  // per node
  std::vector<TimelineEntry> timeline;
  std::vector<OpSpan> op_spans;
  std::vector<Chip::CounterSample> counters;
  ChipReport report;
};

}  // namespace tg::sim
