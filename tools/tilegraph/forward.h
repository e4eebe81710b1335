#pragma once
// Running a sibling executable in place of this process: `tilegraph compile` runs
// tilegraph-compile and `tilegraph run --backend tx8` runs tilegraph-tx8, so that only those link
// MLIR and LLVM (some 200 MB of address space) and `tilegraph` itself does not load them.
#include <string>
#include <vector>

namespace tg::cli {

// The executable `name` in this executable's directory.
std::string beside_this_executable(const std::string& name);
// This process's command line as it was given (argv[0] included).
std::vector<std::string> own_arguments();
// Replaces this process with `path` run with `args` (args[0] included); throws tg::Error naming
// `what` if it cannot.
[[noreturn]] void exec_instead(const std::string& what, const std::string& path, std::vector<std::string> args);

}  // namespace tg::cli
