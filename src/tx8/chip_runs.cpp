#include "tilegraph/tx8/chip_runs.h"

#include <map>
#include <memory>

#include "tilegraph/tx8/graph_split.h"

namespace tg::tx8 {

ChipRunsReport compile_and_run_chip_runs(const Graph& graph, const compiler::CompileOptions& options, sim::Chip& chip) {
  ChipRunsReport out;
  // One memo for every run: a layer identical to one of an earlier run takes its plan.
  compiler::CompileOptions run_options = options;
  if (!run_options.plan_memo) run_options.plan_memo = compiler::make_group_plan_memo();
  std::map<std::string, int> host_ops;
  const std::vector<int64_t> readers = last_readers(graph);
  const auto on_chip = [](const Tensor& node) { return compiler::chip_supports(node); };
  for (const Run& part : split_runs(graph, on_chip)) {
    if (!part.chip) {
      for (size_t i : part.nodes) ++host_ops[std::string(op_name(graph.nodes()[i]->op))];
      continue;
    }
    const RunGraph part_graph = extract_run(graph, part, readers);
    std::unique_ptr<compiler::ChipProgram> program = compiler::compile_graph(part_graph.graph, run_options);
    compiler::run_with_zero_arguments(*program, chip);
    const int first = int(out.compile.groups.size());
    for (compiler::GroupReport g : program->report().groups) {
      g.group_id += first;
      if (g.template_of >= 0) g.template_of += first;
      out.compile.groups.push_back(std::move(g));
    }
    out.compile.compile_seconds += program->report().compile_seconds;
    out.compile.search_seconds += program->report().search_seconds;
    out.compile.jit_compiles += program->report().jit_compiles;
    const compiler::GroupCostCounts& search = program->report().search;
    out.compile.search.searched += search.searched;
    out.compile.search.reused += search.reused;
    out.compile.search.earlier += search.earlier;
    out.compile.search.candidates += search.candidates;
  }
  for (const auto& [op, count] : host_ops) out.host_ops.push_back(op + " x" + std::to_string(count));
  return out;
}

}  // namespace tg::tx8
