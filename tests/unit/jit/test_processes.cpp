// Several processes sharing one disk cache: a second process loads from disk, and processes
// racing for one new kernel compile it exactly once.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <thread>

#include "jit_test_utils.h"

namespace tg::jit {
namespace {

using testing::kernel_template;
using testing::TempDir;

nlohmann::json parse_child(const ProcessResult& result) {
  EXPECT_TRUE(result.ok()) << result.describe() << "\n" << result.err;
  try {
    return nlohmann::json::parse(result.out);
  } catch (const nlohmann::json::exception&) {
    ADD_FAILURE() << "child output is not JSON: " << result.out << result.err;
    return {};
  }
}

TEST(Processes, SecondProcessLoadsFromDisk) {
  TempDir tmp;
  const std::string cache = (tmp.path() / "cache").string();
  const std::vector<std::string> args = {"--cache", cache,     "--template", kernel_template("saxpy.cpp"),
                                         "-D",      "SCALE=4", "--scale",    "4"};
  const nlohmann::json first = parse_child(testing::run_child(args));
  const nlohmann::json second = parse_child(testing::run_child(args));
  EXPECT_EQ(first["source"], "compile");
  EXPECT_EQ(second["source"], "disk");
  EXPECT_EQ(first["id"], second["id"]);
  EXPECT_EQ(first["works"], true);
  EXPECT_EQ(second["works"], true);
}

TEST(Processes, EightProcessesRacingForOneNewKernelCompileItOnce) {
  TempDir tmp;
  const std::string cache = (tmp.path() / "cache").string();
  const std::string go = (tmp.path() / "go").string();
  constexpr int kProcesses = 8;
  std::vector<ProcessResult> results(kProcesses);
  std::vector<std::thread> threads;
  for (int i = 0; i < kProcesses; ++i) {
    threads.emplace_back([&, i] {
      results[size_t(i)] = testing::run_child({"--cache", cache, "--template", kernel_template("saxpy.cpp"), "-D",
                                               "SCALE=6", "--scale", "6", "--wait-for", go});
    });
  }
  // Release them together once all have been started.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  testing::write_text(go, "");
  for (std::thread& t : threads) t.join();
  int compiles = 0;
  int disk = 0;
  std::string id;
  for (const ProcessResult& result : results) {
    const nlohmann::json out = parse_child(result);
    compiles += out.value("source", "") == "compile";
    disk += out.value("source", "") == "disk";
    EXPECT_EQ(out.value("works", false), true);
    if (id.empty()) id = out.value("id", "");
    EXPECT_EQ(out.value("id", ""), id);
  }
  EXPECT_EQ(compiles, 1);
  EXPECT_EQ(disk, kProcesses - 1);
  DiskCache disk_cache(cache);
  EXPECT_EQ(testing::cached_ids(disk_cache), std::vector<std::string>{id});
  EXPECT_EQ(testing::files_in(disk_cache, "tmp"), 0u);
  EXPECT_EQ(testing::files_in(disk_cache, "kernels"), 2u);  // <id>.so and <id>.json, no lock file
}

}  // namespace
}  // namespace tg::jit
