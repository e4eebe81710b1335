// `tilegraph compile` in a build without the TX8 compiler: says how to get one.
#include "commands.h"
#include "tilegraph/core/error.h"

namespace tg::cli {

void add_compile_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("compile", "(not in this build) The TX8 compiler: needs MLIR 15");
  cmd->allow_extras();
  cmd->callback([] {
    throw Error(
        "compile: this build has no TX8 compiler; install MLIR 15 (libmlir-15-dev, mlir-15-tools; "
        "scripts/bootstrap does) and configure with -DTG_BUILD_COMPILER=ON");
  });
}

}  // namespace tg::cli
