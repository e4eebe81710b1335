// tilegraph: command-line front end. Subcommands are registered from their own files.
#include <cstdio>
#include <exception>

#include "commands.h"
#include "tilegraph/core/error.h"

int main(int argc, char** argv) {
  CLI::App app{"tilegraph: a compute-graph compiler and runtime for AI accelerators"};
  app.set_version_flag("--version", std::string("tilegraph ") + TG_VERSION);
  app.require_subcommand(1);
  tg::cli::add_info_command(app);
  tg::cli::add_demo_command(app);
  tg::cli::add_jit_command(app);
  tg::cli::add_run_command(app);
  tg::cli::add_gguf_gen_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tilegraph: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
