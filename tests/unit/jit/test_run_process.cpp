// run_process: output capture, exit statuses and the time limit, which must also end what the
// program started (a compiler driver's cc1plus) and a program that closed its output.
#include <gtest/gtest.h>

#include <signal.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include "jit_test_utils.h"

#include "tilegraph/core/error.h"
#include "tilegraph/jit/process.h"

namespace tg::jit {
namespace {

using namespace std::chrono_literals;

ProcessResult sh(const std::string& script, std::chrono::milliseconds timeout = 0ms) {
  ProcessOptions options;
  options.timeout = timeout;
  return run_process({find_executable("sh"), "-c", script}, options);
}

TEST(RunProcess, CollectsOutputAndExitStatus) {
  const ProcessResult r = sh("echo out; echo err >&2; exit 3");
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "err\n");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_FALSE(r.ok());
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.describe(), "exit status 3");
}

TEST(RunProcess, AProgramWithinTheLimitIsNotDisturbed) {
  const ProcessResult r = sh("sleep 0.1; echo done", 20s);
  EXPECT_TRUE(r.ok()) << r.describe();
  EXPECT_EQ(r.out, "done\n");
}

// Whether process `pid` has ended (gone, or a zombie nobody reaped yet), waiting up to 10 s for
// the kill to be delivered.
bool ended(const std::string& pid) {
  for (int i = 0; i < 1000; ++i) {
    std::ifstream stat("/proc/" + pid + "/stat");
    std::string line;
    if (!std::getline(stat, line)) return true;
    const size_t paren = line.rfind(')');
    if (paren != std::string::npos && line.compare(paren, 3, ") Z") == 0) return true;
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

TEST(RunProcess, TheTimeLimitKillsTheProgramAndWhatItStarted) {
  testing::TempDir tmp;
  const std::string pid_file = (tmp.path() / "pid").string();
  const auto start = std::chrono::steady_clock::now();
  // The background sleep stands for a compiler's cc1plus, blocked on a FIFO.
  const ProcessResult r = sh("sleep 60 & echo $! > " + pid_file + "; echo started; wait", 300ms);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 20s);
  EXPECT_TRUE(r.timed_out);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.out, "started\n") << "output before the limit is kept";
  EXPECT_EQ(r.describe(), "killed after running for 300 ms, the time limit");
  const std::string pid = testing::read_text(pid_file);
  ASSERT_FALSE(pid.empty());
  EXPECT_TRUE(ended(pid.substr(0, pid.find('\n')))) << "the program's child outlived the time limit";
}

TEST(RunProcess, AProgramThatClosedItsOutputIsStillTimed) {
  const auto start = std::chrono::steady_clock::now();
  const ProcessResult r = sh("exec >/dev/null 2>&1; sleep 60", 300ms);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 20s);
  EXPECT_TRUE(r.timed_out);
}

// The resource limits are the kernel's: they stop a program even when no one is left to time it.
TEST(RunProcess, TheCpuTimeLimitStopsABusyProgram) {
  ProcessOptions options;
  options.cpu_time = 1s;
  options.timeout = 30s;  // only so that a missing limit fails the test instead of hanging it
  const auto start = std::chrono::steady_clock::now();
  const ProcessResult r = run_process({find_executable("sh"), "-c", "while :; do :; done"}, options);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 60s);
  EXPECT_TRUE(r.signaled);
  EXPECT_EQ(r.signal, SIGXCPU) << r.describe();
  EXPECT_EQ(r.describe(), "killed by signal " + std::to_string(SIGXCPU) + " (CPU time limit exceeded)");
}

TEST(RunProcess, TheAddressSpaceLimitFailsLargeAllocations) {
  ProcessOptions options;
  options.address_space = uint64_t(256) << 20;
  options.timeout = 30s;
  // 512 MiB of 'a's in a shell variable: refused under the limit, fine without it.
  const std::string script = "x=$(head -c 536870912 /dev/zero | tr '\\0' a) && echo ${#x}";
  const ProcessResult limited = run_process({find_executable("sh"), "-c", script}, options);
  EXPECT_FALSE(limited.ok());
  EXPECT_NE(limited.out, "536870912\n");
}

// What the program leaves in its process group when it exits (a daemon) is killed with it.
TEST(RunProcess, WhatTheProgramLeftInItsGroupIsKilled) {
  testing::TempDir tmp;
  const std::string pid_file = (tmp.path() / "pid").string();
  const ProcessResult r = sh("sleep 60 > /dev/null 2>&1 & echo $! > " + pid_file);
  EXPECT_TRUE(r.ok()) << r.describe();
  const std::string pid = testing::read_text(pid_file);
  ASSERT_FALSE(pid.empty());
  EXPECT_TRUE(ended(pid.substr(0, pid.find('\n'))));
}

TEST(RunProcess, AProgramThatCannotStartIsAnError) {
  try {
    run_process({"/nonexistent/compiler"});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "jit: cannot run /nonexistent/compiler: No such file or directory");
  }
  ProcessOptions options;
  options.cwd = "/nonexistent/dir";
  try {
    run_process({find_executable("true")}, options);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot enter the working directory for"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tg::jit
