// The cache directory holds code this process will run, so it must be private to the user.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jit_test_utils.h"
#include "tilegraph/core/error.h"
#include "tilegraph/jit/cache_dir.h"

namespace tg::jit {
namespace {

using testing::TempDir;

mode_t mode_of(const std::filesystem::path& p) {
  struct stat st;
  EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
  return st.st_mode & 07777;
}

std::string refusal(const std::filesystem::path& dir) {
  try {
    prepare_cache_dir(dir);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(CacheDir, IsCreatedPrivateWithItsParents) {
  TempDir tmp;
  const std::filesystem::path dir = tmp.path() / "a" / "b" / "jit";
  prepare_cache_dir(dir);
  EXPECT_EQ(mode_of(dir), 0700u);
  EXPECT_EQ(mode_of(tmp.path() / "a"), 0700u);
  DiskCache cache(dir);
  for (const char* sub : {"kernels", "deps", "toolchains", "tmp"}) EXPECT_EQ(mode_of(dir / sub), 0700u) << sub;
}

TEST(CacheDir, AcceptsAnExistingPrivateOrReadOnlySharedDirectory) {
  TempDir tmp;
  ASSERT_EQ(::chmod(tmp.path().c_str(), 0755), 0);
  EXPECT_EQ(refusal(tmp.path()), "");
}

TEST(CacheDir, RefusesADirectoryOthersCanWrite) {
  TempDir tmp;
  for (mode_t mode : {0777, 0770, 0722, 0702, 01777}) {
    ASSERT_EQ(::chmod(tmp.path().c_str(), mode), 0);
    const std::string message = refusal(tmp.path());
    EXPECT_NE(message.find("refusing cache directory"), std::string::npos) << std::oct << mode;
    EXPECT_NE(message.find("chmod 700"), std::string::npos) << message;
  }
}

TEST(CacheDir, RefusesADirectoryOwnedBySomeoneElse) {
  TempDir tmp;
  std::filesystem::path foreign;
  if (::geteuid() == 0) {
    foreign = tmp.path() / "foreign";
    std::filesystem::create_directory(foreign);
    ASSERT_EQ(::chmod(foreign.c_str(), 0700), 0);
    ASSERT_EQ(::chown(foreign.c_str(), 65534, 65534), 0);  // nobody
  } else {
    foreign = "/usr";  // owned by root, not writable by others
  }
  const std::string message = refusal(foreign);
  EXPECT_NE(message.find("refusing cache directory"), std::string::npos) << message;
  EXPECT_NE(message.find("not by this user"), std::string::npos) << message;
  // The compiler refuses it before doing anything.
  Config config = Config::from_env();
  config.cache_dir = foreign;
  EXPECT_THROW(Compiler compiler(config), Error);
}

TEST(CacheDir, RefusesAFile) {
  TempDir tmp;
  const std::filesystem::path file = tmp.path() / "file";
  testing::write_text(file, "x");
  EXPECT_NE(refusal(file).find("not a directory"), std::string::npos);
}

TEST(CacheDir, CompilerRefusesABadDirectoryFromTheEnvironment) {
  TempDir tmp;
  ASSERT_EQ(::chmod(tmp.path().c_str(), 0777), 0);
  const testing::ScopedEnv dir("TG_JIT_CACHE_DIR", tmp.path().c_str());
  const Config config = Config::from_env();
  EXPECT_EQ(config.cache_dir, tmp.path());
  EXPECT_THROW(Compiler compiler(config), Error);
}

TEST(CacheDir, DefaultsUnderHome) {
  const testing::ScopedEnv dir("TG_JIT_CACHE_DIR", nullptr);
  const testing::ScopedEnv home("HOME", "/home/someone");
  EXPECT_EQ(Config::from_env().cache_dir, "/home/someone/.cache/tilegraph/jit");
}

}  // namespace
}  // namespace tg::jit
