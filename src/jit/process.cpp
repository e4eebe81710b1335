#include "tilegraph/jit/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <mutex>
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

std::vector<char*> c_strings(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (const std::string& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

// The process groups of the programs running now, for the signal handler below: a fixed array
// of atomics, because a handler may neither allocate nor lock. A program that finds it full is
// still ended by its supervisor when this process dies (see supervise).
std::array<std::atomic<pid_t>, 64> running_groups;

class RegisteredGroup {
 public:
  explicit RegisteredGroup(pid_t group) {
    for (size_t i = 0; i < running_groups.size(); ++i) {
      pid_t free = 0;
      if (running_groups[i].compare_exchange_strong(free, group)) {
        slot_ = int(i);
        return;
      }
    }
  }
  ~RegisteredGroup() {
    if (slot_ >= 0) running_groups[size_t(slot_)].store(0);
  }
  RegisteredGroup(const RegisteredGroup&) = delete;
  RegisteredGroup& operator=(const RegisteredGroup&) = delete;

 private:
  int slot_ = -1;
};

void kill_running_groups_and_die(int signal) {
  for (std::atomic<pid_t>& group : running_groups) {
    if (const pid_t g = group.load(); g > 0) ::kill(-g, SIGKILL);
  }
  ::signal(signal, SIG_DFL);
  ::raise(signal);
}

// SIGINT, SIGTERM and SIGHUP, where they still have their default action (a program's own
// handlers, or an ignored SIGHUP, are left alone), end the running programs before this process
// dies of them: they are in process groups of their own, which a terminal's Ctrl-C does not reach.
void install_interrupt_handlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (int signal : {SIGINT, SIGTERM, SIGHUP}) {
      struct sigaction current {};
      if (::sigaction(signal, nullptr, &current) != 0 || current.sa_handler != SIG_DFL) continue;
      struct sigaction handler {};
      handler.sa_handler = kill_running_groups_and_die;
      sigemptyset(&handler.sa_mask);
      ::sigaction(signal, &handler, nullptr);
    }
  });
}

// What the child reports through its status pipe when it cannot start the program.
struct StartFailure {
  int step;  // index into kStartSteps
  int error;
};
constexpr const char* kStartSteps[] = {"cannot run", "cannot fork to run", "cannot enter the working directory for",
                                       "cannot set the resource limits of", "cannot redirect the output of"};

// Everything the child needs, prepared before fork: after it, in a multithreaded parent, the
// child may only make async-signal-safe calls (no allocation).
struct Launch {
  char** argv;
  char** env;
  const char* cwd;  // null: ours
  int out_fd, err_fd, status_fd;
  pid_t parent;
  std::optional<rlimit> cpu, address_space;
};

[[noreturn]] void report_and_exit(int status_fd, int step) {
  const StartFailure failure{step, errno};
  [[maybe_unused]] const ssize_t ignored = ::write(status_fd, &failure, sizeof failure);
  ::_exit(127);
}

// The program itself: default signal handling, nothing blocked, the limits, then exec.
[[noreturn]] void exec_program(const Launch& l) {
  struct sigaction defaults {};
  defaults.sa_handler = SIG_DFL;
  for (int signal = 1; signal < NSIG; ++signal) ::sigaction(signal, &defaults, nullptr);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  if (l.cwd && ::chdir(l.cwd) != 0) report_and_exit(l.status_fd, 2);
  if ((l.cpu && ::setrlimit(RLIMIT_CPU, &*l.cpu) != 0) ||
      (l.address_space && ::setrlimit(RLIMIT_AS, &*l.address_space) != 0)) {
    report_and_exit(l.status_fd, 3);
  }
  ::execve(l.argv[0], l.argv, l.env);
  report_and_exit(l.status_fd, 0);
}

// The child of run_process, which supervises the program: it leads a new process group (the
// program and everything it starts, a compiler driver's cc1plus and as, stay in it) and kills the
// whole group when this process dies, however it dies — PR_SET_PDEATHSIG tells it, and SIGKILL
// leaves no other way to know. The program itself cannot have that: the death signal is not
// inherited by what it forks. The supervisor exits as the program did.
[[noreturn]] void supervise(Launch l) {
  // Every signal is blocked (by run_process, around the fork) and taken with sigwaitinfo only:
  // none runs a handler inherited from the parent.
  ::setpgid(0, 0);
  struct sigaction defaults {};
  defaults.sa_handler = SIG_DFL;
  for (int signal : {SIGCHLD, SIGTERM, SIGINT, SIGHUP}) ::sigaction(signal, &defaults, nullptr);
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  // The parent may have died before the death signal was set up: then it never comes.
  if (::getppid() != l.parent) ::_exit(127);
  // Only 0..2 for the program and 3 for the status stay open. This process does not exec, so the
  // parent's other descriptors would live on in it, close-on-exec or not: another thread's pipes
  // (whose reader would then wait for this compile too) and the flock locks it holds.
  const int devnull = ::open("/dev/null", O_RDONLY);
  const int moved[] = {::fcntl(devnull, F_DUPFD, 10), ::fcntl(l.out_fd, F_DUPFD, 10), ::fcntl(l.err_fd, F_DUPFD, 10),
                       ::fcntl(l.status_fd, F_DUPFD, 10)};
  for (int fd = 0; fd < 4; ++fd) {
    if (devnull < 0 || moved[fd] < 0 || ::dup2(moved[fd], fd) < 0) report_and_exit(l.status_fd, 4);
  }
  l.status_fd = 3;
  ::fcntl(l.status_fd, F_SETFD, FD_CLOEXEC);
  if (::syscall(SYS_close_range, 4u, ~0u, 0u) != 0) {  // Linux before 5.9
    rlimit files{};
    ::getrlimit(RLIMIT_NOFILE, &files);
    for (int fd = 4; fd < int(std::min<rlim_t>(files.rlim_cur, 1 << 16)); ++fd) ::close(fd);
  }
  const pid_t program = ::_Fork();
  if (program < 0) report_and_exit(l.status_fd, 1);
  if (program == 0) exec_program(l);
  ::close(l.status_fd);  // the program's copy closes on exec: end of file then means it started
  sigset_t wanted;
  sigemptyset(&wanted);
  for (int signal : {SIGCHLD, SIGTERM, SIGINT, SIGHUP}) sigaddset(&wanted, signal);
  for (;;) {
    const int signal = ::sigwaitinfo(&wanted, nullptr);
    if (signal == SIGCHLD) {
      int status = 0;
      if (::waitpid(program, &status, WNOHANG) != program) continue;
      if (WIFEXITED(status)) ::_exit(WEXITSTATUS(status));
      // Die of the same signal, so that the parent's report names it.
      const int cause = WTERMSIG(status);
      ::sigaction(cause, &defaults, nullptr);
      sigset_t just;
      sigemptyset(&just);
      sigaddset(&just, cause);
      ::sigprocmask(SIG_UNBLOCK, &just, nullptr);
      ::raise(cause);
      ::_exit(128 + cause);
    }
    if (signal > 0) ::kill(0, SIGKILL);  // the parent died, or someone asked: end the whole group
  }
}

// The limits for the child: the smaller of the one asked for and the current hard limit, which
// an unprivileged process cannot raise. A soft CPU limit sends SIGXCPU, which a program may
// catch; the hard one, a second later, SIGKILL.
std::optional<rlimit> limit_of(int resource, uint64_t wanted, uint64_t hard_grace) {
  if (wanted == 0) return std::nullopt;
  rlimit current{};
  if (::getrlimit(resource, &current) != 0) return std::nullopt;
  rlimit limit{};
  limit.rlim_cur = std::min<rlim_t>(rlim_t(wanted), current.rlim_max);
  limit.rlim_max = std::min<rlim_t>(rlim_t(wanted + hard_grace), current.rlim_max);
  return limit;
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

  int status_pipe[2];
  if (::pipe2(status_pipe, O_CLOEXEC) != 0) throw Error(std::string("jit: pipe: ") + std::strerror(errno));
  Fd status_read{status_pipe[0]}, status_write{status_pipe[1]};

  std::vector<char*> args = c_strings(argv);
  std::vector<char*> env_storage;
  char** env = environ;
  if (options.env) {
    env_storage = c_strings(*options.env);
    env = env_storage.data();
  }
  const Launch launch{args.data(),
                      env,
                      options.cwd.empty() ? nullptr : options.cwd.c_str(),
                      out_write.fd,
                      err_write.fd,
                      status_write.fd,
                      ::getpid(),
                      limit_of(RLIMIT_CPU, uint64_t(options.cpu_time.count()), 1),
                      limit_of(RLIMIT_AS, options.address_space, 0)};
  install_interrupt_handlers();
  // The child starts with every signal blocked, until it has left our process group and chosen
  // how it takes them; a Ctrl-C in between would otherwise run our handler in it.
  sigset_t all;
  sigset_t ours;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &ours);
  // _Fork, not fork: no pthread_atfork handlers run (OpenBLAS's would stop its thread pool for
  // every compile), and the child needs none, as it only makes async-signal-safe calls.
  const pid_t pid = ::_Fork();
  if (pid == 0) supervise(launch);
  const int fork_error = errno;
  ::pthread_sigmask(SIG_SETMASK, &ours, nullptr);
  if (pid < 0) throw Error("jit: cannot run " + argv[0] + ": fork: " + std::strerror(fork_error));
  // The child does the same: whichever runs first, the group exists before anyone signals it.
  ::setpgid(pid, pid);
  const RegisteredGroup registered(pid);
  out_write.reset();
  err_write.reset();
  status_write.reset();
  StartFailure failure{};
  ssize_t got;
  while ((got = ::read(status_read.fd, &failure, sizeof failure)) < 0 && errno == EINTR) {
  }
  if (got == ssize_t(sizeof failure)) {
    kill_and_reap(pid);
    const int step = std::clamp(failure.step, 0, int(std::size(kStartSteps)) - 1);
    throw Error("jit: " + std::string(kStartSteps[step]) + " " + argv[0] + ": " + std::strerror(failure.error));
  }

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
  // Whatever the program left in its group (a daemon it started) goes too. The supervisor is
  // reaped only after that: until then its pid, the group's id, cannot be reused.
  siginfo_t exited{};
  while (::waitid(P_PID, id_t(pid), &exited, WEXITED | WNOWAIT) < 0) {
    if (errno != EINTR) throw Error(std::string("jit: waitid: ") + std::strerror(errno));
  }
  ::kill(-pid, SIGKILL);
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
    const bool plain =
        !arg.empty() &&
        arg.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=/.,:@%") ==
            std::string::npos;
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
