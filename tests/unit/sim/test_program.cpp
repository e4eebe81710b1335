// A whole program as a compiler would emit one: a GEMM split over every tile of the chip, each
// tile streaming K blocks of A and B from DDR into two SPM buffers (RDMA) while the NE multiplies
// the other pair, then storing its block of D (WDMA). Checks the result against the reference and
// the schedule against the roofline: never faster than the NE peak or the DDR bandwidth allow.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "sim_test_utils.h"
#include "tilegraph/sim/lsu.h"
#include "tilegraph/sim/ne.h"

namespace tg::sim {
namespace {

struct SplitGemm {
  int64_t m, n, k, kc;  // kc: the K block each NE instruction multiplies
};

// D[M][N] f32 = A[M][K] . W[N][K]^T, bf16 in DDR at 0 (A), a_bytes (W), then D.
void run_split_gemm(Chip& chip, const SplitGemm& g, uint64_t a_addr, uint64_t w_addr, uint64_t d_addr) {
  const int tx = chip.config().mesh_x, ty = chip.config().mesh_y;
  const int64_t mb = g.m / ty, nb = g.n / tx;
  for (int t = 0; t < chip.tile_count(); ++t) {
    Tile& tile = chip.tile(t);
    const int64_t m0 = tile.y() * mb, n0 = tile.x() * nb;
    // SPM: the accumulator, then two buffers each holding an A block and a W block.
    const uint64_t acc = 0, buffer0 = uint64_t(mb * nb) * 4;
    const uint64_t buffer_bytes = uint64_t((mb + nb) * g.kc) * 2;
    Event used[2];
    for (int64_t k0 = 0, step = 0; k0 < g.k; k0 += g.kc, ++step) {
      const uint64_t buf = buffer0 + uint64_t(step % 2) * buffer_bytes;
      tile.wait(Engine::RDMA, used[step % 2]);  // the NE is done with this buffer's previous pair
      execute(tile,
              lsu::LoadVar{
                  Format::BF16, {a_addr, {1, 1, g.m, g.k}, {0, 0, m0, k0}, {1, 1, mb, g.kc}}, buf, MemLayout::Tensor});
      execute(tile, lsu::LoadVar{Format::BF16,
                                 {w_addr, {1, 1, g.n, g.k}, {0, 0, n0, k0}, {1, 1, nb, g.kc}},
                                 buf + uint64_t(mb * g.kc) * 2,
                                 MemLayout::Tensor});
      tile.wait(Engine::NE, tile.record(Engine::RDMA));
      execute(tile, ne::Gemm{Format::BF16, buf, buf + uint64_t(mb * g.kc) * 2, acc, mb, nb, g.kc, true, step > 0});
      used[step % 2] = tile.record(Engine::NE);
    }
    tile.wait(Engine::WDMA, tile.record(Engine::NE));
    execute(tile,
            lsu::DmaStore{
                Format::FP32, acc, MemLayout::Tensor, {d_addr, {1, 1, g.m, g.n}, {0, 0, m0, n0}, {1, 1, mb, nb}}});
  }
}

TEST(Program, GemmSplitOverTheMeshMatchesReferenceAndRespectsTheRoofline) {
  Chip chip{ChipConfig{}};
  const SplitGemm g{256, 192, 384, 128};
  test::Rng rng(31);
  std::vector<float> a = test::random_values(rng, g.m * g.k, -1, 1), w = test::random_values(rng, g.n * g.k, -1, 1);
  std::vector<uint16_t> a16(a.size()), w16(w.size());
  from_f32(Format::BF16, a.data(), a16.data(), int64_t(a.size()), RoundMode::NearestEven);
  from_f32(Format::BF16, w.data(), w16.data(), int64_t(w.size()), RoundMode::NearestEven);
  to_f32(Format::BF16, a16.data(), a.data(), int64_t(a.size()));
  to_f32(Format::BF16, w16.data(), w.data(), int64_t(w.size()));
  const uint64_t a_addr = 0, w_addr = a16.size() * 2, d_addr = w_addr + w16.size() * 2;
  chip.ddr().write(a_addr, a16.data(), a16.size() * 2);
  chip.ddr().write(w_addr, w16.data(), w16.size() * 2);
  run_split_gemm(chip, g, a_addr, w_addr, d_addr);

  std::vector<float> d(size_t(g.m * g.n));
  chip.ddr().read(d_addr, d.data(), d.size() * 4);
  Context ctx;
  const std::vector<float> ref =
      test::reference_result(mul_mat(ctx, test::tensor_of(ctx, w, {g.k, g.n}), test::tensor_of(ctx, a, {g.k, g.m})));
  for (size_t i = 0; i < d.size(); ++i) ASSERT_NEAR(d[i], ref[i], 1e-5 * double(g.k)) << i;

  const ChipReport r = chip.report();
  EXPECT_EQ(r.hazard_count, 0u) << (r.hazards.empty() ? "" : r.hazards[0]);
  const ChipConfig& c = chip.config();
  const double ne_bound = 2.0 * double(g.m * g.n * g.k) / (derive_peaks(c).bf16_tflops * 1e12) * c.clock_mhz * 1e6;
  const double ddr_bytes = double(r.ddr_read_bytes + r.ddr_write_bytes);
  EXPECT_EQ(r.ddr_read_bytes, uint64_t(16 * (g.m / 4 + g.n / 4) * g.k * 2));
  EXPECT_EQ(r.ddr_write_bytes, uint64_t(g.m * g.n * 4));
  EXPECT_GE(double(r.total_cycles), ne_bound);
  EXPECT_GE(double(r.total_cycles), ddr_bytes / c.ddr.bytes_per_cycle);
  // Double buffering: the NE and RDMA of a tile overlap, so the whole takes less than their sum.
  const TileReport& t0 = r.tiles[0];
  EXPECT_LT(r.total_cycles, t0.engines[size_t(Engine::NE)].busy_cycles + t0.engines[size_t(Engine::RDMA)].busy_cycles +
                                t0.engines[size_t(Engine::WDMA)].busy_cycles);
  EXPECT_EQ(t0.spm_high_water, uint64_t(64 * 48 * 4 + 2 * (64 + 48) * 128 * 2));
}

}  // namespace
}  // namespace tg::sim
