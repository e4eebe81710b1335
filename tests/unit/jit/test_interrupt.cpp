// A compile must not outlive the program that started it: `tilegraph jit compile` killed during
// a compile by SIGINT to its process group (a terminal's Ctrl-C), by SIGTERM or by SIGKILL leaves
// no compiler process running, and what it left in the cache (its build directory, its lock) is
// removed the next time the cache is opened.
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "jit_test_utils.h"
#include "tilegraph/core/error.h"
#include "tilegraph/jit/disk_cache.h"

namespace tg::jit {
namespace {

using namespace std::chrono_literals;
using testing::kernel_template;
using testing::TempDir;

struct CompilerProcess {
  pid_t pid;
  std::string name;  // /proc/<pid>/comm: "cc1plus", "c++", ...
};

// The processes whose working directory is inside `dir`: the compile runs in its build directory
// there, and what the compiler driver starts inherits it, re-parented or not.
std::vector<CompilerProcess> processes_in(const std::filesystem::path& dir) {
  std::vector<CompilerProcess> found;
  const std::string prefix = std::filesystem::canonical(dir).string() + "/";
  DIR* proc = ::opendir("/proc");
  if (!proc) return found;
  while (const dirent* entry = ::readdir(proc)) {
    const std::string name = entry->d_name;
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::error_code error;
    const std::string cwd = std::filesystem::read_symlink("/proc/" + name + "/cwd", error).string();
    if (error || !cwd.starts_with(prefix)) continue;
    std::string comm = testing::read_text("/proc/" + name + "/comm");
    if (!comm.empty() && comm.back() == '\n') comm.pop_back();
    found.push_back({pid_t(std::stoi(name)), comm});
  }
  ::closedir(proc);
  return found;
}

bool has(const std::vector<CompilerProcess>& processes, const std::string& name) {
  for (const CompilerProcess& p : processes) {
    if (p.name == name) return true;
  }
  return false;
}

std::string names(const std::vector<CompilerProcess>& processes) {
  std::string out;
  for (const CompilerProcess& p : processes) out += " " + p.name + " (" + std::to_string(p.pid) + ")";
  return out;
}

class Interrupt : public ::testing::TestWithParam<int> {};

TEST_P(Interrupt, NoCompilerOutlivesTheCliAndTheNextStartCleansUp) {
  const int signal = GetParam();
  TempDir tmp;
  const std::filesystem::path cache = tmp.path() / "cache";
  const std::string log = (tmp.path() / "log").string();

  // The CLI in a process group of its own, as a shell runs a command, so that SIGINT can go to
  // the whole group as a terminal sends it.
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setpgroup(&attributes, 0);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  std::vector<std::string> env = {"TG_JIT_CACHE_DIR=" + cache.string(), "PATH=/usr/local/bin:/usr/bin:/bin",
                                  "HOME=" + tmp.path().string()};
  std::vector<char*> envp;
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::string cli = TG_CLI, jit = "jit", compile = "compile", flag = "--template", slow = kernel_template("slow.cpp");
  char* argv[] = {cli.data(), jit.data(), compile.data(), flag.data(), slow.data(), nullptr};
  pid_t pid = 0;
  ASSERT_EQ(posix_spawn(&pid, argv[0], &actions, &attributes, argv, envp.data()), 0);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);

  // Until cc1plus runs (the CLI first asks the compiler its version and the template's headers).
  const std::filesystem::path builds = cache / "tmp";
  const auto give_up = std::chrono::steady_clock::now() + 120s;
  while (!(std::filesystem::exists(builds) && has(processes_in(builds), "cc1plus"))) {
    ASSERT_LT(std::chrono::steady_clock::now(), give_up) << "no cc1plus started:\n" << testing::read_text(log);
    ASSERT_EQ(::waitpid(pid, nullptr, WNOHANG), 0) << "the CLI ended first:\n" << testing::read_text(log);
    std::this_thread::sleep_for(20ms);
  }
  ASSERT_EQ(::kill(signal == SIGINT ? -pid : pid, signal), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == signal) << "status " << status;

  // Killing takes a moment to reach the group; then nothing of the compile may be left.
  std::vector<CompilerProcess> left = processes_in(builds);
  for (int i = 0; i < 500 && !left.empty(); ++i) {
    std::this_thread::sleep_for(10ms);
    left = processes_in(builds);
  }
  EXPECT_TRUE(left.empty()) << "still running after " << strsignal(signal) << ":" << names(left);
  for (const CompilerProcess& p : left) ::kill(p.pid, SIGKILL);  // this test's own leftovers

  // The dead CLI could not remove its build directory, nor release its lock file.
  auto count = [&](const char* subdir, std::string_view suffix) {
    size_t n = 0;
    for (const auto& entry : std::filesystem::directory_iterator(cache / subdir)) {
      n += entry.path().filename().string().find(suffix) != std::string::npos;
    }
    return n;
  };
  EXPECT_EQ(count("tmp", ".build."), 1u);
  EXPECT_EQ(count("kernels", ".lock"), 1u);
  const DiskCache reopened(cache);
  EXPECT_EQ(count("tmp", ".build."), 0u);
  EXPECT_EQ(count("kernels", ".lock"), 0u);
}

INSTANTIATE_TEST_SUITE_P(
    Signals, Interrupt, ::testing::Values(SIGINT, SIGTERM, SIGKILL), [](const ::testing::TestParamInfo<int>& info) {
      return std::string(info.param == SIGINT ? "SIGINT" : info.param == SIGTERM ? "SIGTERM" : "SIGKILL");
    });

// A build directory whose kernel's lock a live process holds is a build in progress: opening the
// cache leaves it and the lock alone.
TEST(CacheLeftovers, TheNextStartLeavesALiveBuildAlone) {
  TempDir tmp;
  const std::filesystem::path cache = tmp.path() / "cache";
  DiskCache first(cache);
  const std::string id(64, 'a');
  bool checked = false;
  const auto build = [&](const std::filesystem::path& work_dir, const std::filesystem::path&) {
    const DiskCache second(cache);
    EXPECT_TRUE(std::filesystem::is_directory(work_dir));
    EXPECT_TRUE(std::filesystem::exists(cache / "kernels" / (id + ".lock")));
    checked = true;
    throw Error("build stopped by the test");
  };
  EXPECT_THROW(first.load_or_build(id, nlohmann::json::object(), build), Error);
  EXPECT_TRUE(checked);
}

}  // namespace
}  // namespace tg::jit
