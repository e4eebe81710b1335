// `tilegraph compile` in a build with the TX8 compiler: runs tilegraph-compile (beside this
// executable) with the same arguments. The compiler lives in its own executable so that
// `tilegraph` itself does not load the MLIR and LLVM libraries (some 200 MB of address space)
// for every other command.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "commands.h"
#include "tilegraph/core/error.h"

namespace tg::cli {

namespace {

std::string compiler_path() {
  std::string self(4096, '\0');
  const ssize_t n = readlink("/proc/self/exe", self.data(), self.size() - 1);
  if (n <= 0) throw Error(std::string("compile: cannot find this executable: ") + std::strerror(errno));
  self.resize(size_t(n));
  return self.substr(0, self.rfind('/') + 1) + "tilegraph-compile";
}

}  // namespace

void add_compile_command(CLI::App& app) {
  auto* cmd =
      app.add_subcommand("compile",
                         "Compile a llama step's graph for the TX8 chip: print its tx8be module, or run it on the "
                         "C-model and report (see tilegraph compile --help)");
  cmd->prefix_command();  // every argument goes to tilegraph-compile, --help too
  cmd->set_help_flag();
  cmd->callback([cmd] {
    const std::string path = compiler_path();
    std::vector<std::string> args = {path, "compile"};
    for (const std::string& arg : cmd->remaining()) args.push_back(arg);
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    std::fflush(stdout);
    execv(path.c_str(), argv.data());
    throw Error("compile: cannot run '" + path + "': " + std::strerror(errno));
  });
}

}  // namespace tg::cli
