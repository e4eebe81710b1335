// `tilegraph-bench graph`, decode section: per-step time of the decode workload, eager against
// graph replay, the graph rebuilt and allocated every step as a decode loop does; compute alone
// on graphs built once; and the step against the memory-bandwidth bound.
#include <algorithm>
#include <cstdio>

#include "graph_workloads.h"
#include "measure.h"

namespace tg::bench::graph_suite {

std::vector<DecodeRow> run_decode(const ReadBandwidth& bandwidth, const std::vector<int64_t>& d_models, bool quiet) {
  std::vector<DecodeRow> rows;
  for (const ModelSize& size : kSizes) {
    if (!d_models.empty() && std::find(d_models.begin(), d_models.end(), size.d_model) == d_models.end()) continue;
    const Model model(size, kDecodeContext);
    for (int threads : {1, 2}) {
      auto eager_backend = cpu_backend(threads, false);
      auto graph_backend = cpu_backend(threads, true);
      Decoder eager(*eager_backend, model), graphed(*graph_backend, model);
      // Big models take tens of ms a step: fewer, shorter rounds keep the suite quick.
      const bool big = size.d_model >= 1024;
      const int rounds = big ? 5 : 7;
      const double min_s = big ? 0.08 : 0.03;
      const std::string tag = "decode/d" + std::to_string(size.d_model) + "/" + std::to_string(threads) + "t";

      DecodeRow row{};
      row.d_model = size.d_model;
      row.threads = threads;
      {
        Context ctx({.no_alloc = true});
        const StepGraph s = build_step(ctx, model, kDecodeContext);
        row.nodes = s.graph.size();
        row.executed = executed_nodes(s.graph);
      }
      row.weight_mib = model.weight_bytes / (1 << 20);
      for (int i = 0; i < 3; ++i) graphed.next_decode_step();  // capture, then hits
      eager.next_decode_step();

      // Steps, each round preceded by one bandwidth run for the bound.
      std::vector<double> bandwidths;
      graph_backend->graph_mode()->reset_stats();
      const auto steps =
          measure_rounds(tag + "/step", {[&] { eager.next_decode_step(); }, [&] { graphed.next_decode_step(); }},
                         rounds, min_s, [&] { bandwidths.push_back(bandwidth.measure(threads, 1)); });
      row.graph_hit_rate = hit_rate(graph_backend->graph_mode()->stats());
      row.eager_step_s = median_of(steps[0]);
      row.graph_step_s = median_of(steps[1]);
      row.step_ratio = median_ratio(steps[0], steps[1]);
      std::vector<double> effs;
      for (int r = 0; r < rounds; ++r) effs.push_back(model.weight_bytes / bandwidths[size_t(r)] / steps[1][size_t(r)]);
      row.bandwidth = median_of(bandwidths);
      row.bound_s = model.weight_bytes / row.bandwidth;
      row.bound_eff = median_of(effs);

      // Compute alone, on graphs built once.
      const Graph& eager_graph = eager.persistent_graph().graph;
      const Graph& graph_graph = graphed.persistent_graph().graph;
      graph_backend->compute(graph_graph);
      const auto computes = measure_rounds(
          tag + "/compute",
          {[&] { eager_backend->compute(eager_graph); }, [&] { graph_backend->compute(graph_graph); }}, rounds, min_s);
      row.eager_compute_s = median_of(computes[0]);
      row.graph_compute_s = median_of(computes[1]);
      row.compute_ratio = median_ratio(computes[0], computes[1]);
      rows.push_back(row);
      if (!quiet) {
        std::printf(
            "%7lld %3d %5zu/%-4zu %8.2f %10.1f %10.1f %6.2fx %10.1f %10.1f %6.2fx %5.0f%% %6.2f %10.1f %6.0f%%\n",
            (long long)row.d_model, row.threads, row.executed, row.nodes, row.weight_mib, row.eager_step_s * 1e6,
            row.graph_step_s * 1e6, row.step_ratio, row.eager_compute_s * 1e6, row.graph_compute_s * 1e6,
            row.compute_ratio, row.graph_hit_rate * 100, row.bandwidth / 1e9, row.bound_s * 1e6, 100 * row.bound_eff);
        std::fflush(stdout);
      }
    }
  }
  return rows;
}

}  // namespace tg::bench::graph_suite
