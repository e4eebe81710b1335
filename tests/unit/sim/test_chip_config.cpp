// The chip configuration: defaults reproduce the TX8 table, JSON overrides, errors name the key.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/expect_error.h"
#include "tilegraph/sim/chip_config.h"

namespace tg::sim {
namespace {

// The figure rounded at the table's precision (whole units).
long whole(double x) { return std::lround(x); }

TEST(ChipConfig, DefaultsReproduceTheTx8Table) {
  const ChipPeaks p = derive_peaks(ChipConfig{});
  EXPECT_EQ(whole(p.int8_tops), 256);
  EXPECT_EQ(whole(p.bf16_tflops), 128);
  EXPECT_EQ(whole(p.tf32_tflops), 128);
  EXPECT_EQ(whole(p.fp32_tflops), 21);
  EXPECT_EQ(whole(p.ddr_gb_per_s), 200);
  EXPECT_EQ(whole(p.ddr_gib), 64);
  // 16 tiles x 4 arrays x 2048 flop at 976.5625 MHz is 128 T exactly.
  EXPECT_DOUBLE_EQ(p.bf16_tflops, 128.0);
  EXPECT_DOUBLE_EQ(p.ddr_gb_per_s, 200.0);
  EXPECT_EQ(ChipConfig{}.tile_count(), 16);
}

TEST(ChipConfig, PeaksFollowTheConfiguration) {
  ChipConfig c;
  c.mesh_x = c.mesh_y = 2;
  EXPECT_DOUBLE_EQ(derive_peaks(c).bf16_tflops, 32.0);
  c.ne.arrays_per_tile = 8;
  EXPECT_DOUBLE_EQ(derive_peaks(c).bf16_tflops, 64.0);
}

TEST(ChipConfig, JsonOverridesSomeKeysAndKeepsTheOtherDefaults) {
  const ChipConfig c = chip_config_from_json(nlohmann::json::parse(
      R"({"mesh": {"x": 2, "y": 2}, "spm_bytes": 1048576, "ne": {"cycles_per_step": {"fp32": 4}}, "ddr": {"bytes_per_cycle": 100}})"));
  EXPECT_EQ(c.mesh_x, 2);
  EXPECT_EQ(c.mesh_y, 2);
  EXPECT_EQ(c.spm_bytes, 1048576u);
  EXPECT_EQ(c.ne.cycles_per_step_fp32, 4.0);
  EXPECT_EQ(c.ne.cycles_per_step_bf16, 1.0);
  EXPECT_EQ(c.ddr.bytes_per_cycle, 100.0);
  EXPECT_EQ(c.ne.arrays_per_tile, ChipConfig{}.ne.arrays_per_tile);
  // A 1x1 chip is valid.
  EXPECT_EQ(chip_config_from_json(nlohmann::json::parse(R"({"mesh": {"x": 1, "y": 1}})")).tile_count(), 1);
}

TEST(ChipConfig, ToJsonRoundTrips) {
  ChipConfig c;
  c.mesh_x = 3;
  c.noc.hop_latency_cycles = 11;
  const ChipConfig back = chip_config_from_json(to_json(c));
  EXPECT_EQ(to_json(back), to_json(c));
}

TEST(ChipConfig, BadValuesNameTheKey) {
  using test::expect_error;
  auto parse = [](const char* text) { return chip_config_from_json(nlohmann::json::parse(text)); };
  expect_error([&] { parse(R"({"ne": {"arrays_per_tile": -1}})"); },
               "ne.arrays_per_tile: expected a positive integer, got -1");
  expect_error([&] { parse(R"({"mesh": {"x": "four"}})"); }, "mesh.x: expected a positive integer, got \"four\"");
  expect_error([&] { parse(R"({"ddr": {"bandwidth": 200}})"); }, "ddr.bandwidth: unknown key");
  expect_error([&] { parse(R"({"clock_mhz": 0})"); }, "clock_mhz: expected a positive number, got 0");
  expect_error([&] { parse(R"({"spm_bytes": 1000})"); }, "spm_bytes: expected a multiple of 256");
  expect_error([&] { parse(R"({"ne": {"cycles_per_step": {"fp8": 1}}})"); }, "ne.cycles_per_step.fp8: unknown key");
  expect_error([&] { parse(R"({"noc": 5})"); }, "noc: expected an object");
}

TEST(ChipConfig, FileErrorsNameTheFile) {
  using test::expect_error;
  expect_error([] { load_chip_config("/nonexistent/chip.json"); }, "cannot open '/nonexistent/chip.json'");
  const std::string path = ::testing::TempDir() + "/bad_chip.json";
  { std::ofstream(path) << R"({"rdma": {"latency_cycles": -5}})"; }
  expect_error([&] { load_chip_config(path); }, "rdma.latency_cycles: expected an integer >= 0, got -5");
  { std::ofstream(path) << "{not json"; }
  expect_error([&] { load_chip_config(path); }, "not valid JSON");
}

}  // namespace
}  // namespace tg::sim
