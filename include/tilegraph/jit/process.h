#pragma once
// Runs a program directly — fork and exec with an argument vector, never a shell — and collects
// its output. Every compiler invocation of the JIT goes through here. The program cannot outlive
// its caller: it runs under a small supervisor process that leads a process group of its own and
// kills the whole group (the program and all it started) when the caller dies, even of SIGKILL;
// SIGINT, SIGTERM and SIGHUP with their default action kill the groups at once; and resource
// limits stop even a program that escaped (docs/jit-reference.md, "Interruption").
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tg::jit {

struct ProcessOptions {
  // The child's whole environment ("NAME=value"); unset: inherit ours.
  std::optional<std::vector<std::string>> env;
  // The child's working directory; empty: ours.
  std::string cwd;
  // Output beyond this many bytes per stream is read and dropped (a note says so).
  size_t max_output_bytes = 256 * 1024;
  // Past this the program and everything it started are killed (SIGKILL to its process group);
  // zero: no limit. A compiler reading a FIFO or a device would otherwise block its caller for good.
  std::chrono::milliseconds timeout{0};
  // The program's CPU time limit (RLIMIT_CPU, which what it starts inherits and has on its own):
  // past it SIGXCPU, a second later SIGKILL; zero: no limit. Unlike the timeout, it holds without
  // the caller.
  std::chrono::seconds cpu_time{0};
  // The program's address space limit in bytes (RLIMIT_AS, inherited the same way); zero: none.
  uint64_t address_space = 0;
};

struct ProcessResult {
  int exit_code = -1;  // valid when !signaled
  bool signaled = false;
  int signal = 0;
  bool timed_out = false;  // killed for running past ProcessOptions::timeout
  std::chrono::milliseconds timeout{0};
  std::string out;  // stdout
  std::string err;  // stderr

  bool ok() const { return !signaled && exit_code == 0; }
  // "exit status 1", "killed by signal 9 (Killed)" or "killed after running for 600 s, the time
  // limit" (ms below whole seconds).
  std::string describe() const;
};

// argv[0] must be a path (see find_executable). Throws tg::Error if the program cannot be
// started; a program that runs and fails is reported in the result, not thrown.
ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& options = {});

// Resolves `name` the way execvp would: a name containing '/' is taken as a path (made absolute),
// anything else is searched for in $PATH. Returns an empty string if no executable is found.
std::string find_executable(const std::string& name);

// `argv` as a copy-pasteable shell command line, for error messages only.
std::string quote_command(const std::vector<std::string>& argv);

}  // namespace tg::jit
