#pragma once
// Each subcommand of the `tilegraph` CLI lives in its own file and registers itself here.
#include <CLI/CLI.hpp>

namespace tg::cli {

void add_info_command(CLI::App& app);
void add_demo_command(CLI::App& app);
void add_jit_command(CLI::App& app);
void add_run_command(CLI::App& app);
void add_gguf_gen_command(CLI::App& app);
void add_perplexity_command(CLI::App& app);
void add_sim_command(CLI::App& app);
// The TX8 compiler: compile.cpp in tilegraph-compile; in tilegraph, compile_forward.cpp runs that
// (or, without the compiler, compile_unavailable.cpp says how to get it).
void add_compile_command(CLI::App& app);

}  // namespace tg::cli
