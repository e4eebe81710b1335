// `tilegraph jit compile|ls|stats|clear` as a user runs them, against a private cache.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "jit_test_utils.h"

namespace tg::jit {
namespace {

using testing::kernel_template;
using testing::TempDir;

class JitCli : public ::testing::Test {
 protected:
  ProcessResult run(std::vector<std::string> args) {
    args.insert(args.begin(), {TG_CLI, "jit"});
    std::vector<std::string> env = {"TG_JIT_CACHE_DIR=" + (tmp_.path() / "cache").string()};
    for (char** e = environ; *e; ++e) {
      if (!std::string_view(*e).starts_with("TG_JIT_CACHE_DIR=")) env.emplace_back(*e);
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
};

TEST_F(JitCli, CompileLsStatsClear) {
  const std::vector<std::string> compile = {"compile", "--template", kernel_template("saxpy.cpp"),
                                            "-D", "SCALE=2", "--kernel-type", "cpu"};
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
  const ProcessResult hostile =
      run({"compile", "--template", kernel_template("saxpy.cpp"), "-D", "SCALE=2;id"});
  EXPECT_FALSE(hostile.ok());
  EXPECT_NE(hostile.err.find("rejected"), std::string::npos) << hostile.err;
  const ProcessResult broken = run({"compile", "--template", kernel_template("broken.cpp")});
  EXPECT_FALSE(broken.ok());
  EXPECT_NE(broken.err.find("this_identifier_is_not_declared_anywhere"), std::string::npos) << broken.err;
  const ProcessResult type = run({"compile", "--template", kernel_template("saxpy.cpp"), "--kernel-type", "gpu"});
  EXPECT_FALSE(type.ok());
  EXPECT_NE(type.err.find("unknown kernel type"), std::string::npos) << type.err;
}

}  // namespace
}  // namespace tg::jit
