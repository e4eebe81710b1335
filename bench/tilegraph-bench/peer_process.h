#pragma once
// A peer benchmark in another process (a Python script timing torch), kept running so that the
// suite can alternate it with in-process peers round by round. The child speaks one JSON object
// per line: a greeting on start, then one reply per request.
#include <sys/types.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace tg::bench {

class PeerProcess {
 public:
  // Starts argv[0] (a path) with argv and reads its greeting. Never throws: a child that cannot
  // start, dies, or greets with {"error": ...} leaves the peer unavailable, with error() saying why.
  explicit PeerProcess(const std::vector<std::string>& argv);
  ~PeerProcess();
  PeerProcess(const PeerProcess&) = delete;
  PeerProcess& operator=(const PeerProcess&) = delete;

  bool available() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  const nlohmann::json& greeting() const { return greeting_; }

  // Sends `request` and returns the reply; a reply {"error": ...} is returned as is. If the child
  // has died, returns {"error": ...} and the peer becomes unavailable.
  nlohmann::json request(const nlohmann::json& request);

 private:
  nlohmann::json read_reply();

  pid_t pid_ = -1;
  FILE* to_child_ = nullptr;
  FILE* from_child_ = nullptr;
  nlohmann::json greeting_;
  std::string error_;
};

}  // namespace tg::bench
