#pragma once
// What `tilegraph compile` shows of a compiled and simulated program: per group the chosen
// sharding, steps, SPM map (peak against the live-bytes lower bound), estimated against simulated
// cycles, and per engine the utilisation — as text (--report), as JSON, or as a self-contained
// HTML page (--emit html) with the SPM occupancy over pipeline cycles and the engine timeline.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tilegraph/compiler/chip_program.h"
#include "tilegraph/sim/chip.h"
#include "tilegraph/sim/chip_config.h"

namespace tg::cli {

struct CompileRun {
  std::string title;  // "embedded default: decode step"
  sim::ChipConfig chip;
  compiler::CompileReport compile;  // every chip run's groups, numbered in graph order
  // The nodes the chip has no program for (they would run on the CPU), per op: "rope x8".
  std::vector<std::string> host_ops;
  sim::ChipReport simulated;                 // the program's run on the C-model
  std::vector<sim::TimelineEntry> timeline;  // the run's instructions as scheduled, every tile
};

// The estimate's error per group, (estimated - simulated) / simulated; groups not simulated are
// left out. The median of their absolute values is what the compiler's accuracy target is about.
double median_estimate_error(const compiler::CompileReport& report);

nlohmann::json report_json(const CompileRun& run);
std::string report_text(const CompileRun& run);
// A page with no outside resources: styles, script and data inline.
std::string report_html(const CompileRun& run);

}  // namespace tg::cli
