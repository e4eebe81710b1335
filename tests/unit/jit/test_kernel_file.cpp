// What the cache loads: only a kernel file it could have written itself (a regular file of this
// user that no one else can write, never through a symlink), and only a `run` that is a function.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <string>

#include "jit_test_utils.h"
#include "tilegraph/core/error.h"

namespace tg::jit {
namespace {

using testing::cached_ids;
using testing::kernel_template;
using testing::saxpy_works;
using testing::TempDir;
using testing::test_config;

const MacroMap kScale2 = {{"SCALE", "2"}};

// Throws unless `fn` throws a tg::Error, whose message it returns.
template <typename Fn>
std::string error_of(Fn fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no tg::Error thrown";
  return "";
}

// Compiles saxpy into the cache in `dir` and returns the path of its kernel file.
std::filesystem::path cached_saxpy(const std::filesystem::path& dir) {
  Compiler compiler(test_config(dir));
  const Kernel kernel = compiler.load(kernel_template("saxpy.cpp"), kScale2, KernelType::kCpu);
  return compiler.cache().kernel_path(kernel.id);
}

// A fresh process's view: nothing in memory, so the kernel comes from the disk.
void load_from_disk(const std::filesystem::path& dir) {
  Compiler compiler(test_config(dir));
  compiler.load(kernel_template("saxpy.cpp"), kScale2, KernelType::kCpu);
}

TEST(KernelFile, ASymlinkedKernelIsRefused) {
  TempDir tmp;
  const std::filesystem::path so = cached_saxpy(tmp.path());
  // The same bytes elsewhere, so that only the symlink can be what is refused.
  const std::filesystem::path elsewhere = tmp.path() / "elsewhere.so";
  std::filesystem::rename(so, elsewhere);
  std::filesystem::create_symlink(elsewhere, so);
  const std::string error = error_of([&] { load_from_disk(tmp.path()); });
  EXPECT_NE(error.find("refusing kernel file " + so.string() + ": it is a symbolic link"), std::string::npos) << error;
}

TEST(KernelFile, AGroupWritableKernelIsRefused) {
  TempDir tmp;
  const std::filesystem::path so = cached_saxpy(tmp.path());
  ASSERT_EQ(::chmod(so.c_str(), 0660), 0);
  const std::string error = error_of([&] { load_from_disk(tmp.path()); });
  EXPECT_NE(error.find("refusing kernel file " + so.string() + ": its mode 0660 lets other users write it"),
            std::string::npos)
      << error;
  ASSERT_EQ(::chmod(so.c_str(), 0602), 0);
  EXPECT_NE(error_of([&] { load_from_disk(tmp.path()); }).find("its mode 0602"), std::string::npos);
}

// The linker makes the file as the umask allows (group-writable under umask 002); the cache
// makes it private before publishing it, so its own kernels load again.
TEST(KernelFile, KernelsBuiltUnderAPermissiveUmaskLoad) {
  TempDir tmp;
  const mode_t saved = ::umask(002);
  const std::filesystem::path so = cached_saxpy(tmp.path());
  ::umask(saved);
  struct stat st;
  ASSERT_EQ(::stat(so.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 077, 0u);
  Compiler fresh(test_config(tmp.path()));  // the kernel stays loaded while it lives
  const Kernel again = fresh.load(kernel_template("saxpy.cpp"), kScale2, KernelType::kCpu);
  EXPECT_EQ(again.source, KernelSource::kDisk);
  EXPECT_TRUE(saxpy_works(again.entry, 2.0f));
}

// `extern "C" int run = 5;` defines a symbol run as well as a function would; the symbol table
// tells them apart, and such a kernel is neither called nor cached.
TEST(KernelFile, ADataSymbolNamedRunIsNotAnEntryPoint) {
  TempDir tmp;
  Compiler compiler(test_config(tmp.path()));
  const std::string error = error_of([&] { compiler.load(kernel_template("data_run.cpp"), {}, KernelType::kCpu); });
  EXPECT_NE(error.find("the kernel's symbol run is a data object, not a function"), std::string::npos) << error;
  EXPECT_TRUE(cached_ids(compiler.cache()).empty());
}

}  // namespace
}  // namespace tg::jit
