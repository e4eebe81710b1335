// `tilegraph jit compile|ls|stats|clear` as a user runs them, against a private cache.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include "jit_test_utils.h"

namespace tg::jit {
namespace {

using testing::kernel_template;
using testing::TempDir;

class JitCli : public ::testing::Test {
 protected:
  // Runs `tilegraph jit args...` with TG_JIT_CACHE_DIR=cache_dir_ and `extra_env` ("NAME=value").
  ProcessResult run(std::vector<std::string> args, const std::vector<std::string>& extra_env = {}) {
    args.insert(args.begin(), {TG_CLI, "jit"});
    std::vector<std::string> env = {"TG_JIT_CACHE_DIR=" + cache_dir_.string()};
    env.insert(env.end(), extra_env.begin(), extra_env.end());
    for (char** e = environ; *e; ++e) {
      const std::string_view var(*e);
      bool replaced = var.starts_with("TG_JIT_CACHE_DIR=");
      for (const std::string& extra : extra_env) {
        replaced = replaced || var.starts_with(extra.substr(0, extra.find('=') + 1));
      }
      if (!replaced) env.emplace_back(var);
    }
    ProcessOptions options;
    options.env = env;
    return run_process(args, options);
  }
  nlohmann::json run_json(std::vector<std::string> args) {
    args.push_back("--json");
    const ProcessResult result = run(args);
    EXPECT_TRUE(result.ok()) << result.describe() << result.err;
    return nlohmann::json::parse(result.out);
  }

  TempDir tmp_;
  std::filesystem::path cache_dir_ = tmp_.path() / "cache";
};

std::vector<std::string> compile_saxpy(const std::string& kernel_template) {
  return {"compile", "--template", kernel_template, "-D", "SCALE=2"};
}

TEST_F(JitCli, CompileLsStatsClear) {
  const std::vector<std::string> compile = {
      "compile", "--template", kernel_template("saxpy.cpp"), "-D", "SCALE=2", "--kernel-type", "cpu"};
  const nlohmann::json first = run_json(compile);
  EXPECT_EQ(first["source"], "compile");
  EXPECT_EQ(first["id"].get<std::string>().size(), 64u);
  const nlohmann::json second = run_json(compile);
  EXPECT_EQ(second["source"], "disk");
  EXPECT_EQ(second["id"], first["id"]);

  const nlohmann::json ls = run_json({"ls"});
  ASSERT_EQ(ls.size(), 1u);
  EXPECT_EQ(ls[0]["id"], first["id"]);
  EXPECT_EQ(ls[0]["in_use"], false);
  EXPECT_NE(ls[0]["macros"].get<std::string>().find("SCALE=2&"), std::string::npos);

  const nlohmann::json stats = run_json({"stats"});
  EXPECT_EQ(stats["entries"], 1);
  EXPECT_GT(stats["bytes"].get<uint64_t>(), 0u);

  const ProcessResult text = run({"ls"});
  EXPECT_TRUE(text.ok());
  EXPECT_NE(text.out.find(first["id"].get<std::string>().substr(0, 16)), std::string::npos) << text.out;

  const nlohmann::json cleared = run_json({"clear"});
  EXPECT_EQ(cleared["removed"], 1);
  EXPECT_EQ(run_json({"stats"})["entries"], 0);
}

TEST_F(JitCli, BadInputFailsWithAMessage) {
  const ProcessResult hostile = run({"compile", "--template", kernel_template("saxpy.cpp"), "-D", "SCALE=2;id"});
  EXPECT_FALSE(hostile.ok());
  EXPECT_NE(hostile.err.find("rejected"), std::string::npos) << hostile.err;
  const ProcessResult broken = run({"compile", "--template", kernel_template("broken.cpp")});
  EXPECT_FALSE(broken.ok());
  EXPECT_NE(broken.err.find("this_identifier_is_not_declared_anywhere"), std::string::npos) << broken.err;
  const ProcessResult type = run({"compile", "--template", kernel_template("saxpy.cpp"), "--kernel-type", "gpu"});
  EXPECT_FALSE(type.ok());
  EXPECT_NE(type.err.find("unknown kernel type"), std::string::npos) << type.err;
  // Read by the compiler, a FIFO would block it for good and /dev/zero never end.
  const std::filesystem::path fifo = tmp_.path() / "f.cpp";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const ProcessResult blocked = run(compile_saxpy(fifo.string()));
  EXPECT_FALSE(blocked.ok());
  EXPECT_NE(blocked.err.find("is a FIFO, not a regular file"), std::string::npos) << blocked.err;
  const ProcessResult endless = run(compile_saxpy("/dev/zero"));
  EXPECT_FALSE(endless.ok());
  EXPECT_NE(endless.err.find("is a character device"), std::string::npos) << endless.err;
}

TEST_F(JitCli, ReadingOrClearingAMissingCacheCreatesNothing) {
  cache_dir_ = tmp_.path() / "new" / "cache";
  for (const char* command : {"ls", "stats", "clear"}) {
    const ProcessResult result = run({command});
    EXPECT_TRUE(result.ok()) << command << ": " << result.err;
  }
  EXPECT_EQ(run_json({"stats"})["entries"], 0);
  EXPECT_EQ(run_json({"ls"}).size(), 0u);
  EXPECT_EQ(run_json({"clear"})["removed"], 0);
  EXPECT_FALSE(std::filesystem::exists(tmp_.path() / "new"));
}

TEST_F(JitCli, RefusesADirectoryThatIsNotACache) {
  // A home directory that happens to have subdirectories with the cache's names: nothing in it
  // may be deleted, however old, and nothing written to it.
  cache_dir_ = tmp_.path() / "home";
  const std::filesystem::path backup = cache_dir_ / "tmp" / (std::string(64, '0') + ".backup");
  std::filesystem::create_directories(backup);
  for (const char* sub : {"sources", "deps", "toolchains"}) std::filesystem::create_directory(cache_dir_ / sub);
  const std::vector<std::filesystem::path> files = {cache_dir_ / "sources" / "main.cpp", cache_dir_ / "deps" / "README",
                                                    cache_dir_ / "tmp" / "old.iso", backup / "data"};
  for (const auto& file : files) {
    testing::write_text(file, "x");
    std::filesystem::last_write_time(file, std::filesystem::file_time_type::clock::now() - std::chrono::hours(2));
  }
  for (const std::vector<std::string>& command :
       {std::vector<std::string>{"clear"}, {"ls"}, {"stats"}, compile_saxpy(kernel_template("saxpy.cpp"))}) {
    const ProcessResult result = run(command);
    EXPECT_FALSE(result.ok()) << command[0];
    EXPECT_NE(result.err.find("refusing cache directory " + cache_dir_.string()), std::string::npos) << result.err;
    EXPECT_NE(result.err.find("set TG_JIT_CACHE_DIR to an empty or new directory"), std::string::npos) << result.err;
  }
  for (const auto& file : files) EXPECT_TRUE(std::filesystem::exists(file)) << file;
  EXPECT_FALSE(std::filesystem::exists(cache_dir_ / "CACHEDIR.TAG"));
  EXPECT_FALSE(std::filesystem::exists(cache_dir_ / "kernels"));
}

TEST_F(JitCli, ClearSaysWhatItKept) {
  run_json(compile_saxpy(kernel_template("saxpy.cpp")));
  // What a process writing a record right now has in tmp/.
  const std::filesystem::path writing = cache_dir_ / "tmp" / (std::string(64, 'a') + ".json.tmp.Xy12z3");
  testing::write_text(writing, "{");
  const ProcessResult result = run({"clear"});
  EXPECT_TRUE(result.ok()) << result.err;
  EXPECT_NE(result.out.find("removed 1 entries"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("kept 1 temporaries of running builds"), std::string::npos) << result.out;
  EXPECT_TRUE(std::filesystem::exists(writing));
  EXPECT_EQ(run_json({"clear"})["kept_temporaries"], 1);
}

TEST_F(JitCli, PathsNeedNotBeUtf8) {
  cache_dir_ = tmp_.path() /
               "j\xff"
               "dir";
  const std::filesystem::path kernels = tmp_.path() /
                                        "k\xfe"
                                        "dir";
  std::filesystem::create_directory(kernels);
  std::filesystem::copy_file(kernel_template("saxpy.cpp"), kernels / "saxpy.cpp");
  std::filesystem::copy_file(kernel_template("saxpy_params.h"), kernels / "saxpy_params.h");
  const std::vector<std::string> compile = compile_saxpy((kernels / "saxpy.cpp").string());
  const ProcessResult text = run(compile);
  EXPECT_TRUE(text.ok()) << text.err;
  EXPECT_NE(text.out.find("compile"), std::string::npos) << text.out;
  // JSON output is UTF-8: the bytes that are not show as U+FFFD.
  const nlohmann::json again = run_json(compile);
  EXPECT_EQ(again["source"], "disk");
  EXPECT_EQ(again["cache_dir"], (tmp_.path() / "j\xef\xbf\xbd"
                                               "dir")
                                    .string());
  const nlohmann::json ls = run_json({"ls"});
  ASSERT_EQ(ls.size(), 1u);
  EXPECT_EQ(ls[0]["template"], (std::filesystem::canonical(tmp_.path()) /
                                "k\xef\xbf\xbd"
                                "dir" /
                                "saxpy.cpp")
                                   .string());
  EXPECT_EQ(run_json({"stats"})["entries"], 1);
  EXPECT_EQ(run_json({"clear"})["removed"], 1);
  EXPECT_EQ(run_json({"stats"})["entries"], 0);
}

TEST_F(JitCli, SmallBudgetsAreShownInBytes) {
  const ProcessResult stats = run({"stats"}, {"TG_JIT_CACHE_MAX_BYTES=1"});
  EXPECT_TRUE(stats.ok()) << stats.err;
  EXPECT_NE(stats.out.find("0 B of 1 B"), std::string::npos) << stats.out;
}

}  // namespace
}  // namespace tg::jit
