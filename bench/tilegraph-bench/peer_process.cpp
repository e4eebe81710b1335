#include "peer_process.h"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

extern char** environ;

namespace tg::bench {

PeerProcess::PeerProcess(const std::vector<std::string>& argv) {
  if (argv.empty() || access(argv[0].c_str(), X_OK) != 0) {
    error_ = (argv.empty() ? std::string("no program") : argv[0]) + " is not an executable";
    return;
  }
  // A child that dies must not take the suite with it when it is next written to.
  signal(SIGPIPE, SIG_IGN);
  int in[2], out[2];  // in: parent -> child's stdin; out: child's stdout -> parent
  if (pipe(in) != 0 || pipe(out) != 0) {
    error_ = std::string("pipe: ") + std::strerror(errno);
    return;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  for (int fd : {in[0], in[1], out[0], out[1]}) posix_spawn_file_actions_addclose(&actions, fd);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const int rc = posix_spawn(&pid_, argv[0].c_str(), &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(in[0]);
  close(out[1]);
  if (rc != 0) {
    close(in[1]);
    close(out[0]);
    pid_ = -1;
    error_ = "cannot start " + argv[0] + ": " + std::strerror(rc);
    return;
  }
  to_child_ = fdopen(in[1], "w");
  from_child_ = fdopen(out[0], "r");
  greeting_ = read_reply();
  if (greeting_.contains("error")) error_ = greeting_["error"].get<std::string>();
}

PeerProcess::~PeerProcess() {
  if (to_child_) std::fclose(to_child_);  // EOF on its stdin: the child's loop ends
  if (from_child_) std::fclose(from_child_);
  if (pid_ > 0) {
    int status = 0;
    waitpid(pid_, &status, 0);
  }
}

nlohmann::json PeerProcess::read_reply() {
  char* line = nullptr;
  size_t capacity = 0;
  const ssize_t n = getline(&line, &capacity, from_child_);
  std::string text = n > 0 ? std::string(line, size_t(n)) : std::string();
  std::free(line);
  nlohmann::json reply = nlohmann::json::parse(text, nullptr, false);
  if (n <= 0 || reply.is_discarded() || !reply.is_object()) {
    reply = {{"error", n <= 0 ? "the peer process exited" : "the peer process replied '" + text + "'"}};
    error_ = reply["error"].get<std::string>();
  }
  return reply;
}

nlohmann::json PeerProcess::request(const nlohmann::json& request) {
  if (!available()) return {{"error", error_}};
  const std::string line = request.dump() + "\n";
  if (std::fputs(line.c_str(), to_child_) < 0 || std::fflush(to_child_) != 0) {
    error_ = "cannot write to the peer process";
    return {{"error", error_}};
  }
  return read_reply();
}

}  // namespace tg::bench
