#pragma once
// `tilegraph run --backend tx8`'s report: simulated cycles and tokens per second at the chip's
// clock, what ran on the CPU, and the compile cache (compiles, replays, JIT hits).
#include <memory>

#include "run_report.h"

namespace tg::cli {

// Null for a backend other than tx8.
std::unique_ptr<RunReport> make_tx8_run_report(Backend& backend);

}  // namespace tg::cli
