#pragma once
// Each benchmark suite is a subcommand defined in its own file.
#include <CLI/CLI.hpp>

namespace tg::bench {

void add_ops_suite(CLI::App& app);
void add_jit_suite(CLI::App& app);
void add_graph_suite(CLI::App& app);
void add_model_suite(CLI::App& app);
void add_gemm_suite(CLI::App& app);
void add_evg_suite(CLI::App& app);
void add_sim_suite(CLI::App& app);
// Only in builds with the TX8 compiler (TG_BUILD_COMPILER).
void add_tx8_suite(CLI::App& app);

}  // namespace tg::bench
