// The schedule's invariants: engines overlap unless told to wait, waits serialise, DDR and NoC
// links are shared fairly whatever order tiles issued in, and distance costs hops.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "sim_test_utils.h"
#include "tilegraph/sim/cgra.h"
#include "tilegraph/sim/dte.h"
#include "tilegraph/sim/lsu.h"

namespace tg::sim {
namespace {

constexpr uint64_t kBytes = 256 * 1024;

// A DDR load of kBytes and an independent vector add on one tile.
struct TwoEngines {
  Chip chip;
  uint64_t load = 0, add = 0;
  explicit TwoEngines(bool dependent)
      : chip([] {
          ChipConfig c;
          c.mesh_x = c.mesh_y = 1;
          return c;
        }()) {
    Tile& tile = chip.tile(0);
    std::vector<uint8_t> zeros(kBytes);
    chip.ddr().write(0, zeros.data(), zeros.size());
    tile.spm().write(kBytes, zeros.data(), 65536);
    load = execute(tile, lsu::LoadConst{0, 0, kBytes});
    if (dependent) tile.wait(Engine::CT, tile.record(Engine::RDMA));
    add = execute(tile, cgra::ArithVV{cgra::ArithOp::Add, Format::FP32, kBytes, kBytes, 2 * kBytes, 16384});
  }
};

TEST(Timing, IndependentEnginesOverlap) {
  TwoEngines p(false);
  const ChipReport r = p.chip.report();
  EXPECT_EQ(r.total_cycles, std::max(p.load, p.add));
  EXPECT_LT(r.total_cycles, p.load + p.add);
  EXPECT_EQ(r.tiles[0].engines[size_t(Engine::RDMA)].busy_cycles, p.load);
  EXPECT_EQ(r.tiles[0].engines[size_t(Engine::CT)].busy_cycles, p.add);
  EXPECT_EQ(r.ddr_read_bytes, kBytes);
}

// A second program after a barrier reports itself alone through report_window: its own cycles,
// instructions and bytes, while report() covers both.
TEST(Timing, ReportWindowCoversTheInstructionsSinceAMark) {
  TwoEngines p(true);
  p.chip.barrier();
  const uint64_t mark = p.chip.mark();
  Tile& tile = p.chip.tile(0);
  const uint64_t load = execute(tile, lsu::LoadConst{0, 0, kBytes});
  const ChipReport window = p.chip.report_window(mark);
  EXPECT_EQ(window.total_cycles, load);
  EXPECT_EQ(window.instructions, 1u);
  EXPECT_EQ(window.ddr_read_bytes, kBytes);
  EXPECT_EQ(window.tiles[0].engines[size_t(Engine::CT)].instructions, 0u);
  const ChipReport all = p.chip.report();
  EXPECT_EQ(all.total_cycles, p.load + p.add + load);
  EXPECT_EQ(all.instructions, 3u);
  // The earlier part alone, and an empty window.
  EXPECT_EQ(p.chip.report_window(0, mark).total_cycles, p.load + p.add);
  EXPECT_EQ(p.chip.report_window(p.chip.mark()).total_cycles, 0u);
  EXPECT_THROW(p.chip.report_window(mark + 5, mark), Error);
}

// settle() is a barrier the host waits on: what follows reports and schedules as after a
// barrier, report() keeps the totals of what settled, and only the new instructions are kept.
TEST(Timing, SettleKeepsTheTotalsAndForgetsTheInstructions) {
  TwoEngines settled(true), barrier(true);
  const Event before = settled.chip.tile(0).record(Engine::CT);
  settled.chip.settle();
  barrier.chip.barrier();
  for (Chip* chip : {&settled.chip, &barrier.chip}) {
    Tile& tile = chip->tile(0);
    execute(tile, lsu::LoadConst{0, 0, kBytes});
    tile.wait(Engine::CT, tile.record(Engine::RDMA));
    execute(tile, cgra::ArithVV{cgra::ArithOp::Add, Format::FP32, kBytes, kBytes, 2 * kBytes, 16384});
  }
  settled.chip.tile(0).wait(Engine::RDMA, before);  // an event from before: it has happened
  const ChipReport a = settled.chip.report(), b = barrier.chip.report();
  EXPECT_EQ(a.total_cycles, b.total_cycles);
  EXPECT_EQ(a.total_cycles, 2 * (settled.load + settled.add));
  EXPECT_EQ(a.instructions, 4u);
  EXPECT_EQ(a.ddr_read_bytes, b.ddr_read_bytes);
  EXPECT_EQ(a.tiles[0].engines[size_t(Engine::CT)].busy_cycles, b.tiles[0].engines[size_t(Engine::CT)].busy_cycles);
  EXPECT_EQ(settled.chip.timeline().size(), 2u);  // the two since the settle, at their absolute times
  EXPECT_EQ(settled.chip.timeline()[0].start, double(settled.load + settled.add));
  // Marks count on; a window after the settle reports itself, one before it cannot.
  const uint64_t mark = settled.chip.mark();
  EXPECT_EQ(mark, barrier.chip.mark() - 1);  // the barrier is a node, the settle is not
  execute(settled.chip.tile(0), lsu::LoadConst{0, 0, kBytes});
  EXPECT_EQ(settled.chip.report_window(mark).total_cycles, settled.load);
  EXPECT_THROW(settled.chip.report_window(0), Error);
  settled.chip.settle();
  settled.chip.settle();  // nothing new: the same totals
  // The last load overlaps the add before it (another engine, no wait).
  const uint64_t last_end = 2 * settled.load + settled.add + std::max(settled.load, settled.add);
  EXPECT_EQ(settled.chip.report().total_cycles, last_end);
  EXPECT_EQ(settled.chip.report().instructions, 5u);
}

TEST(Timing, AWaitSerialises) {
  TwoEngines p(true);
  EXPECT_EQ(p.chip.report().total_cycles, p.load + p.add);
  const auto& t = p.chip.timeline();
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[1].start, t[0].end);
}

TEST(Timing, AnEngineRunsInIssueOrder) {
  ChipConfig c;
  c.mesh_x = c.mesh_y = 1;
  Chip chip(c);
  Tile& tile = chip.tile(0);
  test::put(tile, 0, std::vector<float>(1024, 1.0f), Format::FP32);
  const uint64_t a = execute(tile, cgra::UnaryV{cgra::UnaryOp::Exp, Format::FP32, 0, 8192, 1024});
  const uint64_t b = execute(tile, cgra::UnaryV{cgra::UnaryOp::Relu, Format::FP32, 0, 16384, 1024});
  EXPECT_EQ(chip.report().total_cycles, a + b);
}

// Every tile loads at once: DDR's bandwidth is split 16 ways, so each load takes 16 times its
// share of the bytes, and the result is the same whichever order the tiles were issued in.
TEST(Timing, SixteenTilesShareTheDdrBandwidth) {
  const ChipConfig config;
  std::vector<std::vector<TimelineEntry>> runs;
  for (bool reversed : {false, true}) {
    Chip chip(config);
    std::vector<uint8_t> zeros(kBytes);
    for (int t = 0; t < 16; ++t) chip.ddr().write(uint64_t(t) * kBytes, zeros.data(), kBytes);
    for (int i = 0; i < 16; ++i) {
      const int t = reversed ? 15 - i : i;
      const uint64_t alone = execute(chip.tile(t), lsu::LoadConst{uint64_t(t) * kBytes, 0, kBytes});
      // Alone, a tile is limited by its own RDMA, below DDR's bandwidth.
      EXPECT_EQ(alone,
                uint64_t(config.rdma.latency_cycles) + uint64_t(std::ceil(kBytes / config.rdma.bytes_per_cycle)));
    }
    std::vector<TimelineEntry> by_tile(16);
    for (const TimelineEntry& e : chip.timeline()) by_tile[size_t(e.tile)] = e;
    const double shared = config.rdma.latency_cycles + 16.0 * kBytes / config.ddr.bytes_per_cycle;
    for (const TimelineEntry& e : by_tile) {
      EXPECT_NEAR(e.end - e.start, shared, 1.0) << "tile " << e.tile;
      EXPECT_GT(e.end - e.start, 3.0 * double(e.cost_cycles));  // each sees about 1/16 of DDR, not its RDMA's rate
    }
    EXPECT_EQ(chip.report().ddr_read_bytes, 16 * kBytes);
    runs.push_back(by_tile);
  }
  for (int t = 0; t < 16; ++t) {
    EXPECT_DOUBLE_EQ(runs[0][size_t(t)].start, runs[1][size_t(t)].start);
    EXPECT_DOUBLE_EQ(runs[0][size_t(t)].end, runs[1][size_t(t)].end);
  }
}

TEST(Timing, DteCostsHopsAndSharesLinks) {
  Chip chip{ChipConfig{}};
  Tile& t0 = chip.tile(0, 0);
  std::vector<uint8_t> data(65536, 7);
  t0.spm().write(0, data.data(), data.size());
  const uint64_t one_hop = execute(t0, dte::Copy{0, chip.tile(1, 0).index(), 0, 65536});
  const uint64_t three_hops = execute(t0, dte::Copy{0, chip.tile(2, 1).index(), 0, 65536});
  EXPECT_EQ(chip.hops(0, chip.tile(2, 1).index()), 3);
  EXPECT_GT(three_hops, one_hop);
  EXPECT_EQ(three_hops - one_hop, 2u * uint64_t(chip.config().noc.hop_latency_cycles));
  std::vector<uint8_t> got(65536);
  chip.tile(2, 1).spm().read(0, got.data(), got.size());
  EXPECT_EQ(got, data);
  const ChipReport r = chip.report();
  EXPECT_EQ(r.noc_bytes, 2u * 65536);
  EXPECT_EQ(r.noc_link_bytes, 4u * 65536);

  // Two transfers over the same link take longer together than two over disjoint links.
  auto pair_time = [](int a_from, int a_to, int b_from, int b_to) {
    ChipConfig c;
    c.dte.bytes_per_cycle = c.noc.link_bytes_per_cycle;  // the link, not the engine, limits
    Chip chip(c);
    std::vector<uint8_t> d(1 << 20, 1);
    chip.tile(a_from).spm().write(0, d.data(), d.size());
    chip.tile(b_from).spm().write(0, d.data(), d.size());
    execute(chip.tile(a_from), dte::Copy{0, a_to, 0, d.size()});
    execute(chip.tile(b_from), dte::Copy{0, b_to, 2 << 20, d.size()});
    return chip.report().total_cycles;
  };
  // 0 -> 2 and 1 -> 3 share the link 1 -> 2; 0 -> 1 and 2 -> 3 share nothing.
  EXPECT_GT(double(pair_time(0, 2, 1, 3)), 1.8 * double(pair_time(0, 1, 2, 3)) - 200);
}

TEST(Timing, BarrierAndFence) {
  ChipConfig c;
  c.mesh_x = 2;
  c.mesh_y = 1;
  Chip chip(c);
  for (int t = 0; t < 2; ++t) test::put(chip.tile(t), 0, std::vector<float>(4096, 1.0f), Format::FP32);
  const uint64_t slow = execute(chip.tile(0), cgra::UnaryV{cgra::UnaryOp::Exp, Format::FP32, 0, 65536, 4096});
  chip.barrier();
  const uint64_t quick = execute(chip.tile(1), cgra::MoveV{Format::FP32, 0, 65536, 16});
  EXPECT_EQ(chip.report().total_cycles, slow + quick);
  // A fence orders a tile's engines: the store waits for the CT result it stores.
  const uint64_t before = chip.report().total_cycles;
  const uint64_t exp = execute(chip.tile(1), cgra::UnaryV{cgra::UnaryOp::Exp, Format::FP32, 0, 65536, 4096});
  chip.tile(1).fence();
  const uint64_t store = execute(
      chip.tile(1),
      lsu::DmaStore{Format::FP32, 65536, MemLayout::Tensor, {0, {1, 1, 1, 4096}, {0, 0, 0, 0}, {1, 1, 1, 4096}}});
  EXPECT_EQ(chip.report().total_cycles, before + exp + store);
}

TEST(Timing, ReportCountsBusyCyclesAndSpmHighWater) {
  ChipConfig c;
  c.mesh_x = c.mesh_y = 1;
  Chip chip(c);
  Tile& tile = chip.tile(0);
  test::put(tile, 1000, std::vector<float>(100, 1.0f), Format::FP32);
  execute(tile, cgra::MoveV{Format::FP32, 1000, 5000, 100});
  const ChipReport r = chip.report();
  EXPECT_EQ(r.tiles[0].spm_high_water, 5400u);
  EXPECT_EQ(r.tiles[0].engines[size_t(Engine::CT)].instructions, 1u);
  EXPECT_EQ(r.instructions, 1u);
  const nlohmann::json j = to_json(r);
  EXPECT_EQ(j["tiles"][0]["engines"]["CT"]["instructions"], 1);
}

}  // namespace
}  // namespace tg::sim

namespace tg::sim {
namespace {

// A load into SPM and a CGRA instruction reading it: without a wait the schedule runs them side
// by side, which the chip would get wrong; the report says so.
TEST(Hazards, AMissingWaitIsReported) {
  for (bool waits : {false, true}) {
    ChipConfig c;
    c.mesh_x = c.mesh_y = 1;
    Chip chip(c);
    Tile& tile = chip.tile(0);
    std::vector<uint8_t> bytes(4096, 0);
    chip.ddr().write(0, bytes.data(), bytes.size());
    execute(tile, lsu::LoadConst{0, 0, 4096});
    if (waits) tile.wait(Engine::CT, tile.record(Engine::RDMA));
    execute(tile, cgra::UnaryV{cgra::UnaryOp::Relu, Format::FP32, 0, 8192, 1024});
    const ChipReport r = chip.report();
    if (waits) {
      EXPECT_EQ(r.hazard_count, 0u);
    } else {
      ASSERT_EQ(r.hazard_count, 1u);
      EXPECT_NE(
          r.hazards[0].find("read-after-write hazard on SPM [0x0, 0x1000) of tile 0: CGRATensor_ActOp_V_relu.fp32 "
                            "(tile 0, CT) does not wait for op_loadConst (tile 0, RDMA), issued before it; on this "
                            "schedule it starts "
                            "at cycle 0, before that ends at cycle"),
          std::string::npos)
          << r.hazards[0];
    }
  }
}

TEST(Hazards, OverwritingWhatAnotherEngineStillReads) {
  ChipConfig c;
  c.mesh_x = c.mesh_y = 1;
  Chip chip(c);
  Tile& tile = chip.tile(0);
  std::vector<uint8_t> bytes(65536, 0);
  chip.ddr().write(0, bytes.data(), bytes.size());
  tile.spm().write(0, bytes.data(), bytes.size());
  execute(tile, cgra::UnaryV{cgra::UnaryOp::Exp, Format::FP32, 0, 65536, 16384});
  execute(tile, lsu::LoadConst{0, 0, 65536});  // overwrites the exp's source while it runs
  const ChipReport r = chip.report();
  ASSERT_EQ(r.hazard_count, 1u);
  EXPECT_NE(r.hazards[0].find("write-after-read hazard"), std::string::npos) << r.hazards[0];
}

TEST(Hazards, AcrossTilesThroughTheDte) {
  for (bool waits : {false, true}) {
    ChipConfig c;
    c.mesh_x = 2;
    c.mesh_y = 1;
    Chip chip(c);
    test::put(chip.tile(0), 0, std::vector<float>(256, 1.0f), Format::FP32);
    execute(chip.tile(0), dte::Copy{0, 1, 4096, 1024});
    if (waits) chip.tile(1).wait(Engine::CT, chip.tile(0).record(Engine::DTE));
    execute(chip.tile(1), cgra::MoveV{Format::FP32, 4096, 0, 256});
    EXPECT_EQ(chip.report().hazard_count, waits ? 0u : 1u);
  }
}

}  // namespace
}  // namespace tg::sim

namespace tg::sim {
namespace {

// A DDR-bound copy over the whole chip lands on the DDR roofline: every tile loads a block and
// stores it elsewhere; only two DMA latencies separate the schedule from bytes / bandwidth.
TEST(Timing, ChipWideCopyMeetsTheDdrRoofline) {
  Chip chip{ChipConfig{}};
  const uint64_t block = 1 << 20;
  std::vector<uint8_t> bytes(block, 3);
  for (int t = 0; t < 16; ++t) chip.ddr().write(uint64_t(t) * block, bytes.data(), block);
  for (int t = 0; t < 16; ++t) {
    Tile& tile = chip.tile(t);
    execute(tile, lsu::LoadConst{uint64_t(t) * block, 0, block});
    tile.wait(Engine::WDMA, tile.record(Engine::RDMA));
    execute(
        tile,
        lsu::DmaStore{
            Format::INT8,
            0,
            MemLayout::Tensor,
            {(32u << 20) + uint64_t(t) * block, {1, 1, 1, int64_t(block)}, {0, 0, 0, 0}, {1, 1, 1, int64_t(block)}}});
  }
  const ChipReport r = chip.report();
  const ChipConfig& c = chip.config();
  const double bound = double(r.ddr_read_bytes + r.ddr_write_bytes) / c.ddr.bytes_per_cycle;
  EXPECT_GE(double(r.total_cycles), bound);
  EXPECT_LE(double(r.total_cycles), bound + double(c.rdma.latency_cycles + c.wdma.latency_cycles) + 2);
  EXPECT_EQ(r.hazard_count, 0u);
  std::vector<uint8_t> back(block);
  chip.ddr().read((32u << 20) + 15 * block, back.data(), block);
  EXPECT_EQ(back, bytes);
}

}  // namespace
}  // namespace tg::sim
