// tilegraph-bench: benchmark suites, each printing ratios against a peer measured in the same run.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>

#include "suites.h"

int main(int argc, char** argv) {
  CLI::App app{"tilegraph-bench: throughput and latency benchmarks with in-run baselines"};
  app.require_subcommand(1);
  tg::bench::add_ops_suite(app);
  tg::bench::add_jit_suite(app);
  tg::bench::add_graph_suite(app);
  tg::bench::add_evg_suite(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tilegraph-bench: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
