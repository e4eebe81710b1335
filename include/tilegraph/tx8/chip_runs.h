#pragma once
// A whole graph compiled and run once on the C-model the way the tx8 backend cuts it, without a
// backend: each run of nodes the chip supports compiled (compile_graph) and run with zero
// arguments (run_with_zero_arguments), the nodes between them only counted. For reports and
// benchmarks that want the chip's share of a model's step.
#include <string>
#include <vector>

#include "tilegraph/compiler/chip_program.h"
#include "tilegraph/core/graph.h"
#include "tilegraph/sim/chip.h"

namespace tg::tx8 {

struct ChipRunsReport {
  compiler::CompileReport compile;    // every chip run's groups, renumbered in graph order
  std::vector<std::string> host_ops;  // the nodes left to the CPU, per op: "rope x8"
};

ChipRunsReport compile_and_run_chip_runs(const Graph& graph, const compiler::CompileOptions& options, sim::Chip& chip);

}  // namespace tg::tx8
