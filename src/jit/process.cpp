#include "tilegraph/jit/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <optional>

#include "tilegraph/core/error.h"

extern char** environ;

namespace tg::jit {

namespace {

// Closes whatever it still owns, so no early return or exception leaks a descriptor.
struct Fd {
  int fd = -1;
  ~Fd() { reset(); }
  void reset() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

struct SpawnActions {
  posix_spawn_file_actions_t actions;
  SpawnActions() { posix_spawn_file_actions_init(&actions); }
  ~SpawnActions() { posix_spawn_file_actions_destroy(&actions); }
};

struct SpawnAttributes {
  posix_spawnattr_t attr;
  SpawnAttributes() { posix_spawnattr_init(&attr); }
  ~SpawnAttributes() { posix_spawnattr_destroy(&attr); }
};

std::vector<char*> c_strings(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (const std::string& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

void check(int rc, const char* what) {
  if (rc != 0) throw Error(std::string("jit: ") + what + ": " + std::strerror(rc));
}

// Reads both pipes until the child closes them; a child filling one pipe while we block on the
// other would otherwise deadlock. Returns false if `deadline` passed first (the pipes may still
// be open).
bool drain(int out_fd, int err_fd, size_t limit, std::optional<std::chrono::steady_clock::time_point> deadline,
           std::string& out, std::string& err) {
  pollfd fds[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
  std::string* sinks[2] = {&out, &err};
  bool truncated[2] = {false, false};
  int open_count = 2;
  char buffer[16 * 1024];
  bool in_time = true;
  while (open_count > 0) {
    int wait_ms = -1;
    if (deadline) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(*deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        in_time = false;
        break;
      }
      wait_ms = int(std::min<int64_t>(left.count(), std::numeric_limits<int>::max()));
    }
    const int ready = ::poll(fds, 2, wait_ms);
    if (ready < 0) {
      if (errno == EINTR) continue;
      throw Error(std::string("jit: poll: ") + std::strerror(errno));
    }
    for (int i = 0; i < 2 && ready > 0; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      const ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        fds[i].fd = -1;
        --open_count;
        continue;
      }
      const size_t room = limit > sinks[i]->size() ? limit - sinks[i]->size() : 0;
      sinks[i]->append(buffer, std::min(room, size_t(n)));
      truncated[i] = truncated[i] || size_t(n) > room;
    }
  }
  for (int i = 0; i < 2; ++i) {
    if (truncated[i]) *sinks[i] += "\n[output truncated at " + std::to_string(limit) + " bytes]\n";
  }
  return in_time;
}

// Whether the child exits before `deadline`. The pipes can close before it exits (a program
// that closes its output and goes on), so its exit is awaited within the limit too. Without
// pidfd support (Linux before 5.3) the caller's waitpid simply blocks.
bool exits_in_time(pid_t pid, std::chrono::steady_clock::time_point deadline) {
  Fd pidfd{int(::syscall(SYS_pidfd_open, pid, 0))};
  if (pidfd.fd < 0) return true;
  pollfd exited = {pidfd.fd, POLLIN, 0};
  for (;;) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    const int ready = ::poll(&exited, 1, int(std::min<int64_t>(left.count(), std::numeric_limits<int>::max())));
    if (ready > 0) return true;
    if (ready < 0 && errno != EINTR) return true;
  }
}

// Kills the child's process group (the driver and the compiler proper it started) and reaps the
// child.
void kill_and_reap(pid_t pid) {
  ::kill(-pid, SIGKILL);
  ::kill(pid, SIGKILL);  // in case it left its group
  while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
  }
}

}  // namespace

std::string ProcessResult::describe() const {
  if (timed_out) {
    const int64_t ms = timeout.count();
    return "killed after running for " + (ms % 1000 ? std::to_string(ms) + " ms" : std::to_string(ms / 1000) + " s") +
           ", the time limit";
  }
  if (!signaled) return "exit status " + std::to_string(exit_code);
  return "killed by signal " + std::to_string(signal) + " (" + strsignal(signal) + ")";
}

ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& options) {
  if (argv.empty()) throw Error("jit: run_process: empty argument vector");
  // O_CLOEXEC everywhere: another thread spawning at the same moment must not inherit our pipes,
  // or our reads would wait for its child to exit too.
  int out_pipe[2];
  int err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) throw Error(std::string("jit: pipe: ") + std::strerror(errno));
  Fd out_read{out_pipe[0]}, out_write{out_pipe[1]};
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) throw Error(std::string("jit: pipe: ") + std::strerror(errno));
  Fd err_read{err_pipe[0]}, err_write{err_pipe[1]};

  SpawnActions actions;
  check(posix_spawn_file_actions_addopen(&actions.actions, 0, "/dev/null", O_RDONLY, 0),
        "posix_spawn_file_actions_addopen");
  check(posix_spawn_file_actions_adddup2(&actions.actions, out_write.fd, 1), "posix_spawn_file_actions_adddup2");
  check(posix_spawn_file_actions_adddup2(&actions.actions, err_write.fd, 2), "posix_spawn_file_actions_adddup2");
  if (!options.cwd.empty()) {
    check(posix_spawn_file_actions_addchdir_np(&actions.actions, options.cwd.c_str()),
          "posix_spawn_file_actions_addchdir_np");
  }
  // The child starts with default signal handling and nothing blocked, whatever the host process
  // (a server ignoring SIGPIPE, a thread with signals masked) has set up.
  SpawnAttributes attributes;
  sigset_t defaults;
  sigset_t empty;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  sigemptyset(&empty);
  check(posix_spawnattr_setsigdefault(&attributes.attr, &defaults), "posix_spawnattr_setsigdefault");
  check(posix_spawnattr_setsigmask(&attributes.attr, &empty), "posix_spawnattr_setsigmask");
  // Its own process group, so that a timeout kills whatever it started too (a compiler driver's
  // cc1plus). The price: a terminal's Ctrl-C reaches only us, and a compile in progress then
  // runs on to its end, writing only into the cache's temporary directory.
  check(posix_spawnattr_setpgroup(&attributes.attr, 0), "posix_spawnattr_setpgroup");
  check(posix_spawnattr_setflags(&attributes.attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP),
        "posix_spawnattr_setflags");

  std::vector<char*> args = c_strings(argv);
  std::vector<char*> env_storage;
  char** env = environ;
  if (options.env) {
    env_storage = c_strings(*options.env);
    env = env_storage.data();
  }
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, argv[0].c_str(), &actions.actions, &attributes.attr, args.data(), env);
  if (rc != 0) throw Error("jit: cannot run " + argv[0] + ": " + std::strerror(rc));
  out_write.reset();
  err_write.reset();

  ProcessResult result;
  std::optional<std::chrono::steady_clock::time_point> deadline;
  if (options.timeout.count() > 0) deadline = std::chrono::steady_clock::now() + options.timeout;
  try {
    if (!drain(out_read.fd, err_read.fd, options.max_output_bytes, deadline, result.out, result.err) ||
        (deadline && !exits_in_time(pid, *deadline))) {
      kill_and_reap(pid);
      result.timed_out = true;
      result.timeout = options.timeout;
      return result;
    }
  } catch (...) {
    kill_and_reap(pid);
    throw;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw Error(std::string("jit: waitpid: ") + std::strerror(errno));
  }
  if (WIFSIGNALED(status)) {
    result.signaled = true;
    result.signal = WTERMSIG(status);
  } else {
    result.exit_code = WEXITSTATUS(status);
  }
  return result;
}

std::string find_executable(const std::string& name) {
  auto executable = [](const std::filesystem::path& p) {
    struct stat st;
    return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
  };
  if (name.empty()) return "";
  if (name.find('/') != std::string::npos) {
    const std::filesystem::path p = std::filesystem::absolute(name);
    return executable(p) ? p.string() : "";
  }
  const char* path = std::getenv("PATH");
  std::string_view dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  while (!dirs.empty()) {
    const size_t colon = dirs.find(':');
    const std::string_view dir = dirs.substr(0, colon);
    dirs = colon == std::string_view::npos ? std::string_view() : dirs.substr(colon + 1);
    if (dir.empty()) continue;  // an empty entry means ".", which a JIT must not trust
    const std::filesystem::path candidate = std::filesystem::path(dir) / name;
    if (executable(candidate)) return std::filesystem::absolute(candidate).string();
  }
  return "";
}

std::string quote_command(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& arg : argv) {
    if (!out.empty()) out += ' ';
    const bool plain = !arg.empty() && arg.find_first_not_of(
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=/.,:@%") == std::string::npos;
    if (plain) {
      out += arg;
      continue;
    }
    out += '\'';
    for (char c : arg) {
      if (c == '\'') {
        out += "'\\''";
      } else {
        out += c;
      }
    }
    out += '\'';
  }
  return out;
}

}  // namespace tg::jit
