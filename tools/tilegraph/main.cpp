// tilegraph: command-line front end. Subcommands are registered from their own files.
#include "commands.h"
#include "common/cli_main.h"

int main(int argc, char** argv) {
  CLI::App app{"tilegraph: a compute-graph compiler and runtime for AI accelerators"};
  app.set_version_flag("--version", std::string("tilegraph ") + TG_VERSION);
  app.require_subcommand(1);
  tg::cli::add_info_command(app);
  tg::cli::add_demo_command(app);
  tg::cli::add_jit_command(app);
  tg::cli::add_run_command(app);
  tg::cli::add_gguf_gen_command(app);
  tg::cli::add_perplexity_command(app);
  tg::cli::add_sim_command(app);
  tg::cli::add_compile_command(app);
  return tg::cli::run_cli(app, argc, argv, "tilegraph");
}
