// The trace is a valid Trace Event Format document (the fields chrome://tracing and
// ui.perfetto.dev read): named processes and threads, one complete event per instruction, counters.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "sim_test_utils.h"
#include "tilegraph/sim/cgra.h"
#include "tilegraph/sim/dte.h"
#include "tilegraph/sim/lsu.h"
#include "tilegraph/sim/trace.h"

namespace tg::sim {
namespace {

TEST(Trace, FollowsTheTraceEventFormat) {
  ChipConfig c;
  c.mesh_x = 2;
  c.mesh_y = 1;
  Chip chip(c);
  std::vector<uint8_t> bytes(4096, 0);
  chip.ddr().write(0, bytes.data(), bytes.size());
  Tile& t0 = chip.tile(0);
  t0.begin_op("op_example");
  execute(t0, lsu::LoadConst{0, 0, 4096});
  t0.wait(Engine::CT, t0.record(Engine::RDMA));
  execute(t0, cgra::UnaryV{cgra::UnaryOp::Relu, Format::FP32, 0, 8192, 1024});
  t0.end_op();
  execute(t0, dte::Copy{8192, 1, 0, 4096});

  const std::string path = ::testing::TempDir() + "/sim_trace.json";
  write_trace(chip, path);
  std::ifstream in(path);
  const nlohmann::json trace = nlohmann::json::parse(in);
  ASSERT_TRUE(trace["traceEvents"].is_array());
  std::map<int, std::string> processes;
  std::set<std::pair<int, int>> threads;
  int complete = 0, counters = 0, ops = 0;
  for (const nlohmann::json& e : trace["traceEvents"]) {
    ASSERT_TRUE(e["name"].is_string()) << e;
    ASSERT_TRUE(e["ph"].is_string()) << e;
    ASSERT_TRUE(e["pid"].is_number_integer()) << e;
    const std::string ph = e["ph"];
    const int pid = e["pid"], tid = e.value("tid", 0);
    if (ph == "M") {
      ASSERT_TRUE(e["args"].is_object());
      if (e["name"] == "process_name") processes[pid] = e["args"]["name"];
      if (e["name"] == "thread_name") threads.insert({pid, tid});
    } else if (ph == "X") {
      ASSERT_TRUE(e["tid"].is_number_integer()) << e;
      ASSERT_TRUE(e["ts"].is_number() && e["ts"] >= 0) << e;
      ASSERT_TRUE(e["dur"].is_number() && e["dur"] >= 0) << e;
      // Every slice is on a named thread of a named process.
      EXPECT_TRUE(processes.count(pid)) << e;
      EXPECT_TRUE(threads.count({pid, tid})) << e;
      (e["cat"] == "op" ? ops : complete) += 1;
    } else if (ph == "C") {
      ASSERT_TRUE(e["ts"].is_number()) << e;
      ASSERT_TRUE(e["args"].is_object() && !e["args"].empty()) << e;
      for (const auto& [key, value] : e["args"].items()) ASSERT_TRUE(value.is_number()) << key;
      ++counters;
    } else {
      FAIL() << "unexpected phase " << ph;
    }
  }
  EXPECT_EQ(complete, 3);  // one per instruction
  EXPECT_EQ(ops, 1);
  EXPECT_GT(counters, 0);
  EXPECT_EQ(processes.at(0), "tile 0 (x 0, y 0)");
  EXPECT_EQ(processes.size(), 3u);  // two tiles and the chip's counters
  // Timestamps are microseconds at the configured clock.
  const auto& timeline = chip.timeline();
  for (const nlohmann::json& e : trace["traceEvents"]) {
    if (e["ph"] == "X" && e["name"] == timeline[1].name) {
      EXPECT_DOUBLE_EQ(double(e["ts"]), timeline[1].start / c.clock_mhz);
    }
  }
  EXPECT_EQ(trace["otherData"]["total_cycles"], chip.report().total_cycles);
  test::expect_error([&] { write_trace(chip, "/nonexistent/dir/trace.json"); },
                     "trace: cannot open '/nonexistent/dir/trace.json'");
}

}  // namespace
}  // namespace tg::sim
