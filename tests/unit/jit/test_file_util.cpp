// write_file_if_absent: the first writer publishes, later ones leave its file alone (same inode),
// so a builder's stamps of a content-addressed source stay valid while others write it too.
#include "file_util.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "jit_test_utils.h"

namespace tg::jit {
namespace {

using testing::TempDir;

ino_t inode_of(const std::filesystem::path& p) {
  struct stat st {};
  EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
  return st.st_ino;
}

std::string contents(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(WriteFileIfAbsent, PublishesOnceAndLeavesAnExistingFileAlone) {
  TempDir dir;
  const std::filesystem::path tmp = dir.path() / "tmp", target = dir.path() / "source.cpp";
  std::filesystem::create_directory(tmp);
  EXPECT_TRUE(write_file_if_absent(tmp, target, "int a;"));
  EXPECT_EQ(contents(target), "int a;");
  const ino_t first = inode_of(target);
  EXPECT_FALSE(write_file_if_absent(tmp, target, "int a;"));
  EXPECT_FALSE(write_file_if_absent(tmp, target, "int b;"));
  EXPECT_EQ(inode_of(target), first);
  EXPECT_EQ(contents(target), "int a;");
  EXPECT_TRUE(std::filesystem::is_empty(tmp)) << "no temporary is left behind";
}

TEST(WriteFileIfAbsent, OneOfManyConcurrentWritersPublishes) {
  for (int round = 0; round < 20; ++round) {
    TempDir dir;
    const std::filesystem::path tmp = dir.path() / "tmp", target = dir.path() / "source.cpp";
    std::filesystem::create_directory(tmp);
    std::atomic<int> published{0};
    std::vector<std::thread> writers;
    for (int t = 0; t < 8; ++t) {
      writers.emplace_back([&] { published += write_file_if_absent(tmp, target, "int a;") ? 1 : 0; });
    }
    for (std::thread& w : writers) w.join();
    EXPECT_EQ(published.load(), 1) << "round " << round;
    EXPECT_EQ(contents(target), "int a;");
    EXPECT_TRUE(std::filesystem::is_empty(tmp));
  }
}

}  // namespace
}  // namespace tg::jit
