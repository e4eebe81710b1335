// The cache directory holds code this process will run, so it must be private to the user; and
// the cache deletes files in it, so it must be the cache's own, which its CACHEDIR.TAG says.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <functional>

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

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(CacheDir, ANewCacheIsMarkedWithACacheDirTag) {
  TempDir tmp;
  const std::filesystem::path dir = tmp.path() / "jit";
  DiskCache cache(dir);
  const std::string tag = testing::read_text(dir / "CACHEDIR.TAG");
  // https://bford.info/cachedir/: this exact first line, which backup tools look for.
  EXPECT_TRUE(tag.starts_with("Signature: 8a477f597d28d172789f06886806bc55\n#")) << tag;
  EXPECT_NE(tag.find("tilegraph"), std::string::npos) << tag;
  EXPECT_EQ(testing::files_in(cache, "tmp"), 0u);
  // An empty directory is taken and marked too.
  TempDir empty;
  DiskCache adopted(empty.path());
  EXPECT_EQ(testing::read_text(empty.path() / "CACHEDIR.TAG"), tag);
}

TEST(CacheDir, AdoptsAnUnmarkedCacheOfAnEarlierVersion) {
  // Earlier versions wrote no marker and no sources/; their caches hold only the cache's names.
  TempDir tmp;
  const Config config = testing::test_config(tmp.path());
  std::string id;
  {
    Compiler compiler(config);
    id = compiler.load(testing::kernel_template("saxpy.cpp"), {{"SCALE", "2"}}, KernelType::kCpu).id;
  }
  std::filesystem::remove(config.cache_dir / "CACHEDIR.TAG");
  std::filesystem::remove(config.cache_dir / "sources");
  // Looking writes nothing.
  EXPECT_EQ(testing::cached_ids(DiskCache::open_existing(config.cache_dir)), std::vector<std::string>{id});
  EXPECT_FALSE(std::filesystem::exists(config.cache_dir / "CACHEDIR.TAG"));
  Compiler compiler(config);
  EXPECT_EQ(compiler.load(testing::kernel_template("saxpy.cpp"), {{"SCALE", "2"}}, KernelType::kCpu).source,
            KernelSource::kDisk);
  EXPECT_TRUE(std::filesystem::exists(config.cache_dir / "CACHEDIR.TAG"));
}

TEST(CacheDir, RefusesAnUnmarkedDirectoryHoldingAnythingElse) {
  const std::string hex(64, '0');
  // Each is the one thing in an otherwise empty cache layout that the cache did not write.
  const std::vector<std::pair<std::string, bool>> foreign = {
      {".bashrc", false},
      {"sources/main.cpp", false},
      {"deps/README", false},
      {"toolchains/gcc.json", false},
      {"kernels/notes.txt", false},
      {"tmp/old.iso", false},
      {"tmp/" + hex + ".backup", true},
      {"tmp/" + hex + ".json.bak", false},
      {"sources/" + hex + ".cpp", true},  // a directory where the cache writes files
      {"CACHEDIR.TAG", false},            // another program's marker
      {"Documents", true},
  };
  for (const auto& [name, is_directory] : foreign) {
    TempDir tmp;
    const std::filesystem::path dir = tmp.path() / "home";
    for (const char* sub : {"kernels", "deps", "toolchains", "tmp", "sources"}) {
      std::filesystem::create_directories(dir / sub);
    }
    const std::filesystem::path path = dir / name;
    if (is_directory) {
      std::filesystem::create_directory(path);
    } else {
      testing::write_text(path, "Signature: 8a477f597d28d172789f06886806bc55\n# another program's cache\n");
    }
    const std::string create = error_of([&] { DiskCache cache(dir); });
    EXPECT_NE(create.find("refusing cache directory " + dir.string() + ": it holds " + name), std::string::npos)
        << create;
    EXPECT_NE(create.find("set TG_JIT_CACHE_DIR to an empty or new directory"), std::string::npos) << create;
    EXPECT_EQ(error_of([&] { DiskCache::open_existing(dir); }), create);
    Config config = Config::from_env();
    config.cache_dir = dir;
    EXPECT_THROW(Compiler compiler(config), Error) << name;
    EXPECT_TRUE(std::filesystem::exists(path)) << name;
    EXPECT_EQ(name == "CACHEDIR.TAG", std::filesystem::exists(dir / "CACHEDIR.TAG")) << name;
  }
}

TEST(CacheDir, DefaultsUnderHome) {
  const testing::ScopedEnv dir("TG_JIT_CACHE_DIR", nullptr);
  const testing::ScopedEnv home("HOME", "/home/someone");
  EXPECT_EQ(Config::from_env().cache_dir, "/home/someone/.cache/tilegraph/jit");
}

}  // namespace
}  // namespace tg::jit
