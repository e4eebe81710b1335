#pragma once
// The part of main() that tilegraph and tilegraph-bench share: parse, run the chosen subcommand,
// and turn every failure into one "<program>: error: ..." line and a non-zero status.
#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

namespace tg::cli {

// Exit statuses: 0 success, 1 a failure while running, 2 a command line that does not parse.
inline int run_cli(CLI::App& app, int argc, char** argv, const char* program) {
  // CLI11 reports a mistyped subcommand as "A subcommand is required": name it instead.
  if (argc > 1 && argv[1][0] != '-') {
    bool known = false;
    for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) known |= sub->check_name(argv[1]);
    if (!known) {
      std::fprintf(stderr, "%s: error: unknown subcommand '%s' (see %s --help)\n", program, argv[1], program);
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    std::fprintf(stderr, "%s: error: %s\nRun with --help for more information.\n", program, e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: error: %s\n", program, e.what());
    return 1;
  }
  // Output lost to a full disk or a closed pipe is a failure, not a success.
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    std::fprintf(stderr, "%s: error: writing the output failed: %s\n", program, std::strerror(errno));
    return 1;
  }
  return 0;
}

}  // namespace tg::cli
