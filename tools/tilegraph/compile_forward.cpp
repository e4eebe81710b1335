// `tilegraph compile` in a build with the TX8 compiler: runs tilegraph-compile (beside this
// executable) with the same arguments, so that `tilegraph` itself does not load MLIR (forward.h).
#include <string>
#include <vector>

#include "commands.h"
#include "forward.h"

namespace tg::cli {

void add_compile_command(CLI::App& app) {
  auto* cmd =
      app.add_subcommand("compile",
                         "Compile a llama step's graph for the TX8 chip: print its tx8be module, or run it on the "
                         "C-model and report (see tilegraph compile --help)");
  cmd->prefix_command();  // every argument goes to tilegraph-compile, --help too
  cmd->set_help_flag();
  cmd->callback([cmd] {
    const std::string path = beside_this_executable("tilegraph-compile");
    std::vector<std::string> args = {path, "compile"};
    for (const std::string& arg : cmd->remaining()) args.push_back(arg);
    exec_instead("compile", path, std::move(args));
  });
}

}  // namespace tg::cli
