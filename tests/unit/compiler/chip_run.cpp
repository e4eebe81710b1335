#include "chip_run.h"

#include <gtest/gtest.h>

namespace tg::test {

sim::ChipConfig mesh(int x, int y) {
  sim::ChipConfig config;
  config.mesh_x = x;
  config.mesh_y = y;
  return config;
}

ChipRun run_on_chip(const std::vector<Tensor*>& outputs, const CompilerCase& cc, const sim::ChipConfig& config) {
  compiler::CompileOptions options;
  options.chip = config;
  return run_on_chip(outputs, cc, options);
}

ChipRun run_on_chip(const std::vector<Tensor*>& outputs, const CompilerCase& cc,
                    const compiler::CompileOptions& options) {
  const Graph graph = Graph::build(outputs);
  auto program = compiler::compile_graph(graph, options);
  sim::Chip chip(options.chip);
  uint64_t next = 0;
  auto place = [&](uint64_t bytes) {
    const uint64_t addr = next;
    next += (bytes + 63) / 64 * 64;
    return addr;
  };
  compiler::DdrBinding binding;
  for (const compiler::HostTensor& input : cc.inputs) {
    binding.arguments.push_back(place(input.nbytes()));
    chip.ddr().write(binding.arguments.back(), input.data(), input.nbytes());
  }
  for (const compiler::HostTensor& want : cc.reference) binding.results.push_back(place(want.nbytes()));
  binding.constant = [](std::string_view) { return sim::kNoAddress; };
  binding.scratch = place(program->scratch_bytes());
  ChipRun run;
  run.report = program->run(chip, binding);
  for (size_t i = 0; i < cc.reference.size(); ++i) {
    compiler::HostTensor got = compiler::HostTensor::zeros(cc.reference[i].type(), cc.reference[i].shape());
    chip.ddr().read(binding.results[i], got.mutable_data(), got.nbytes());
    run.results.push_back(std::move(got));
  }
  run.compile = program->report();
  return run;
}

bool chip_runs_whole(const std::vector<Tensor*>& outputs) {
  const Graph graph = Graph::build(outputs);
  for (const Tensor* node : graph.nodes()) {
    if (!compiler::chip_supports(*node)) return false;
  }
  return true;
}

void expect_chip_matches_reference(const std::vector<Tensor*>& outputs, double max_nmse,
                                   const sim::ChipConfig& config) {
  compiler::CompileOptions options;
  options.chip = config;
  expect_chip_matches_reference(outputs, max_nmse, options);
}

ChipRun expect_chip_matches_reference(const std::vector<Tensor*>& outputs, double max_nmse,
                                      const compiler::CompileOptions& options) {
  CompilerContext c;
  const CompilerCase cc = make_compiler_case(c.context, outputs);
  ChipRun run = run_on_chip(outputs, cc, options);
  expect_close(run.results, cc.reference, max_nmse);
  EXPECT_EQ(run.report.hazard_count, 0u) << (run.report.hazards.empty() ? "" : run.report.hazards[0]);
  EXPECT_GT(run.report.total_cycles, 0u);
  return run;
}

}  // namespace tg::test
