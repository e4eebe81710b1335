// The signal cleanup of registered temporaries (model/temporary_files.h), in forked children that
// die of the signal: write_file's temporaries usually have no name while they are written
// (O_TMPFILE), so the command-line tests reach this code only in the instant before the rename.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "temporary_files.h"

namespace tg::model {
namespace {

std::string make_file(const std::string& dir, const char* name) {
  const std::string path = dir + "/" + name;
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
  EXPECT_GE(fd, 0) << path;
  if (fd >= 0) ::close(fd);
  return path;
}

bool exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

// Runs body in a child with the cleanup installed, then sends it `signal`; returns once it died
// of that signal (the test fails otherwise).
template <class Body>
void run_child_and_signal(int signal, Body body) {
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    install_temporary_cleanup();
    body();
    ::raise(signal);
    ::_exit(0);  // not reached: the signal kills the child
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status)) << "status " << status;
  EXPECT_EQ(WTERMSIG(status), signal);
}

class TemporaryFiles : public testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/tg_temporaries_XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::system(("rm -rf '" + dir_ + "'").c_str()); }
  std::string dir_;
};

TEST_F(TemporaryFiles, ASignalRemovesRegisteredTemporariesOnly) {
  for (int signal : {SIGINT, SIGTERM, SIGHUP}) {
    const std::string registered = make_file(dir_, "registered");
    const std::string released = make_file(dir_, "released");
    const std::string other = make_file(dir_, "other");
    run_child_and_signal(signal, [&] {
      static RegisteredTemporary* kept = new RegisteredTemporary(registered);  // alive at the signal
      (void)kept;
      RegisteredTemporary gone(released);  // destroyed before it
    });
    EXPECT_FALSE(exists(registered)) << strsignal(signal);
    EXPECT_TRUE(exists(released)) << strsignal(signal);
    EXPECT_TRUE(exists(other)) << strsignal(signal);
    ::unlink(released.c_str());
    ::unlink(other.c_str());
  }
}

TEST_F(TemporaryFiles, AProgramsOwnHandlerIsLeftAlone) {
  const std::string registered = make_file(dir_, "registered");
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::signal(SIGTERM, [](int) { ::_exit(42); });
    install_temporary_cleanup();
    static RegisteredTemporary* kept = new RegisteredTemporary(registered);
    (void)kept;
    ::raise(SIGTERM);
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 42);
  EXPECT_TRUE(exists(registered)) << "the program's handler owns the cleanup";
}

}  // namespace
}  // namespace tg::model
