// `tilegraph-bench graph`, dispatch section: the cost per executed node of running a graph of
// 1-element tensors eagerly, through graph mode's hit path, and as a replay alone.
#include <cstdio>

#include "graph_workloads.h"
#include "measure.h"
#include "tilegraph/runtime/graph_cache.h"

namespace tg::bench::graph_suite {

std::vector<DispatchRow> run_dispatch(bool quiet) {
  constexpr int kChain = 1000;
  std::vector<DispatchRow> rows;
  for (int threads : {1, 2}) {
    auto eager = cpu_backend(threads, false);
    auto graphed = cpu_backend(threads, true);
    for (ChainKind kind : {ChainKind::kUnfusable, ChainKind::kFusable}) {
      Context ctx;
      const Graph graph = Graph::build(build_chain(ctx, kChain, kind, 1));
      const std::string name = kind == ChainKind::kFusable ? "fusable scale/silu" : "unfusable scale/sum_rows/cont";
      graphed->graph_mode()->clear();
      graphed->compute(graph);  // capture
      graphed->compute(graph);  // hit
      // Timed directly: nothing else computes on this backend meanwhile.
      CapturedGraph& captured = *graphed->graph_mode()->with_cache(
          [](const GraphCache& cache) { return cache.entries().front()->captured.get(); });
      const std::string tag = "dispatch/" + name + "/" + std::to_string(threads) + "t";
      DispatchRow row{name, threads, executed_nodes(graph), 0, 0, 0, 0, 0, 0};
      const double n = double(row.executed);
      std::vector<std::vector<double>> cpu;
      const auto t = measure_rounds(
          tag, {[&] { eager->compute(graph); }, [&] { graphed->compute(graph); }, [&] { graphed->launch(captured); }},
          7, 0.02, {}, &cpu);
      row.hit_cpu_ns = median_of(cpu[1]) / n * 1e9;
      row.launch_cpu_ns = median_of(cpu[2]) / n * 1e9;
      row.eager_ns = median_of(t[0]) / n * 1e9;
      row.hit_ns = median_of(t[1]) / n * 1e9;
      row.launch_ns = median_of(t[2]) / n * 1e9;
      row.ratio = median_ratio(t[0], t[1]);
      rows.push_back(row);
      if (!quiet) {
        std::printf("%-30s %3d %6zu %10.1f %10.1f %10.1f %8.2fx %10.1f %10.1f\n", row.chain.c_str(), row.threads,
                    row.executed, row.eager_ns, row.hit_ns, row.launch_ns, row.ratio, row.hit_cpu_ns,
                    row.launch_cpu_ns);
        std::fflush(stdout);
      }
    }
  }
  return rows;
}

}  // namespace tg::bench::graph_suite
