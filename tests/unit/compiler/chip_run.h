#pragma once
// A core graph compiled with compile_graph and run on the C-model, for the tests that compare
// generated programs with the core reference: the graph's inputs and results placed one after the
// other in the simulated DDR, the results read back.
#include <vector>

#include "compiler_case.h"
#include "tilegraph/compiler/chip_program.h"
#include "tilegraph/compiler/host_tensor.h"
#include "tilegraph/sim/chip.h"

namespace tg::test {

// A chip of x by y tiles, the rest as configured by default.
sim::ChipConfig mesh(int x, int y);

struct ChipRun {
  std::vector<compiler::HostTensor> results;
  sim::ChipReport report;
  compiler::CompileReport compile;
};

// Compiles the graph of `outputs` (whose case `cc` is) for `config` (or with `options`) and runs it.
ChipRun run_on_chip(const std::vector<Tensor*>& outputs, const CompilerCase& cc, const sim::ChipConfig& config);
ChipRun run_on_chip(const std::vector<Tensor*>& outputs, const CompilerCase& cc,
                    const compiler::CompileOptions& options);

// Whether the chip runs every node of the graph of `outputs` (chip_supports).
bool chip_runs_whole(const std::vector<Tensor*>& outputs);

// Runs the graph of `outputs` on the chip and expects the reference's results within `max_nmse`,
// no data hazard on the chip's schedule, and some cycles.
void expect_chip_matches_reference(const std::vector<Tensor*>& outputs, double max_nmse,
                                   const sim::ChipConfig& config = mesh(2, 2));
// The same compiled with `options`; returns the run for the test to look at the plans.
ChipRun expect_chip_matches_reference(const std::vector<Tensor*>& outputs, double max_nmse,
                                      const compiler::CompileOptions& options);

}  // namespace tg::test
