// tilegraph-compile: the `compile` subcommand of tilegraph (tools/tilegraph/compile.cpp) in an
// executable of its own, which `tilegraph compile` runs, so that only it loads MLIR.
#include "commands.h"
#include "common/cli_main.h"

int main(int argc, char** argv) {
  CLI::App app{"tilegraph compile: the TX8 compiler's front end", "tilegraph"};
  app.set_version_flag("--version", std::string("tilegraph ") + TG_VERSION);
  app.require_subcommand(1);
  tg::cli::add_compile_command(app);
  return tg::cli::run_cli(app, argc, argv, "tilegraph");
}
