// Input files (input_file.h): only a regular file is opened for reading, and reads are bounded.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "common/expect_error.h"
#include "tilegraph/core/input_file.h"

namespace tg {
namespace {

using test::expect_error;

class InputFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (std::filesystem::temp_directory_path() / "tg_input_file.XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_F(InputFileTest, NonFilesAreRefusedBeforeAnyRead) {
  const std::string fifo = (dir_ / "fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto start = std::chrono::steady_clock::now();
  // A FIFO without a writer would block the open, and the devices never end.
  expect_error([&] { InputFile::open(fifo, "--x"); }, "--x: '" + fifo + "' is not a regular file (it is a FIFO)");
  expect_error([&] { read_input_file("/dev/zero", 1 << 20, "--x"); },
               "--x: '/dev/zero' is not a regular file (it is a character device)");
  expect_error([&] { read_input_file("/dev/urandom", 1 << 20, "--x"); }, "(it is a character device)");
  expect_error([&] { read_input_file(dir_.string(), 1 << 20, "--x"); }, "(it is a directory)");
  expect_error([&] { read_input_file((dir_ / "missing").string(), 1 << 20, "--x"); },
               "--x: cannot open '" + (dir_ / "missing").string() + "': No such file or directory");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST_F(InputFileTest, AFileUpToTheLimitIsReadWholeAndALargerOneRefused) {
  const std::filesystem::path path = dir_ / "text";
  std::ofstream(path) << std::string(100, 'a');
  EXPECT_EQ(read_input_file(path.string(), 100, "--x"), std::string(100, 'a'));
  expect_error([&] { read_input_file(path.string(), 99, "--x"); },
               "--x: '" + path.string() + "' is larger than the limit of 99 bytes (0 MiB)");
  EXPECT_EQ(read_input_file((dir_ / "text").string(), 1000, "--x").size(), 100u);
}

// A stream that never ends (standard input from /dev/zero) costs the limit, then an error.
TEST_F(InputFileTest, AnEndlessStreamStopsAtTheLimit) {
  const int fd = ::open("/dev/zero", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  expect_error([&] { read_at_most(fd, 3 << 20, "--x", "standard input"); },
               "--x: standard input is larger than the limit of 3145728 bytes (3 MiB)");
  ::close(fd);
  const int empty = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  EXPECT_EQ(read_at_most(empty, 10, "--x", "standard input"), "");
  ::close(empty);
}

}  // namespace
}  // namespace tg
