// tilegraph-tx8: `tilegraph run` with the tx8 backend registered. `tilegraph run --backend tx8`
// runs it with the same command line, so that only this executable loads MLIR.
#include "commands.h"
#include "common/cli_main.h"
#include "run_report.h"
#include "tilegraph/tx8/tx8_backend.h"
#include "tx8_run_report.h"

int main(int argc, char** argv) {
  tg::tx8::register_tx8_backend();
  tg::cli::set_run_report(tg::cli::make_tx8_run_report);
  CLI::App app{"tilegraph run on the tx8 backend (the TX8 chip's C-model)", "tilegraph"};
  app.set_version_flag("--version", std::string("tilegraph ") + TG_VERSION);
  app.require_subcommand(1);
  tg::cli::add_run_command(app);
  return tg::cli::run_cli(app, argc, argv, "tilegraph");
}
