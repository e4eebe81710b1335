#include "forward.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>

#include "tilegraph/core/error.h"

namespace tg::cli {

std::string beside_this_executable(const std::string& name) {
  std::string self(4096, '\0');
  const ssize_t n = readlink("/proc/self/exe", self.data(), self.size() - 1);
  if (n <= 0) throw Error(std::string("cannot find this executable: ") + std::strerror(errno));
  self.resize(size_t(n));
  return self.substr(0, self.rfind('/') + 1) + name;
}

std::vector<std::string> own_arguments() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  const std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> args;
  for (size_t start = 0; start < all.size();) {
    const size_t end = all.find('\0', start);
    args.push_back(all.substr(start, end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return args;
}

void exec_instead(const std::string& what, const std::string& path, std::vector<std::string> args) {
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  std::fflush(stdout);
  std::fflush(stderr);
  execv(path.c_str(), argv.data());
  throw Error(what + ": cannot run '" + path + "': " + std::strerror(errno));
}

}  // namespace tg::cli
