// The header-only GEMM as a JIT-compiled kernel sees it: MatmulVisitor instantiated here, in
// this (baseline-ISA) test file, with a BlockEpilogue type of its own; the BlockScheduler's cut;
// the thread pool's Launcher; the exact f16 conversion the packing uses.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "gemm_test_utils.h"
#include "launcher.h"
#include "thread_pool.h"
#include "tilegraph/core/dtype.h"
#include "tilegraph/evg/host/block_mmad.h"
#include "tilegraph/evg/host/block_scheduler.h"
#include "tilegraph/evg/kernel/matmul_visitor.h"

namespace tg::evg {
namespace {

using test::Reference;
using test::TestMatrix;

// D = alpha * acc + bias[col]: a BlockEpilogue written against block.h alone.
class ScaleBiasEpilogue {
 public:
  struct Arguments {
    float alpha;
    const float* bias;
    float* d;
    int64_t ldd;
  };
  ScaleBiasEpilogue(const Arguments& args, const GemmShape&, const BlockGrid&, int) : args_(args) {}
  void visit(const AccBlock& acc, int) const {
    for (int64_t i = 0; i < acc.rows; ++i) {
      for (int64_t j = 0; j < acc.cols; ++j) {
        args_.d[(acc.row0 + i) * args_.ldd + acc.col0 + j] =
            args_.alpha * acc.data[i * acc.ld + j] + args_.bias[acc.col0 + j];
      }
    }
  }
  void finish(const Launcher&) const {}

 private:
  Arguments args_;
};

using ScaleBiasGemm = kernel::MatmulVisitor<host::BlockMmad, ScaleBiasEpilogue, host::BlockScheduler>;

TEST(MatmulVisitor, OwnEpilogueTypeWithOwnAndCallerWorkspace) {
  std::mt19937 rng(7);
  for (const GemmShape& p : {GemmShape{1, 70, 33}, GemmShape{37, 90, 260}, GemmShape{0, 4, 4}}) {
    const TestMatrix a(rng, ElementType::F16, p.m, p.k, true, 2);
    const TestMatrix b(rng, ElementType::F32, p.k, p.n, false, 1);
    const Reference ref(a, b, p);
    std::vector<float> bias(size_t(p.n));
    for (size_t j = 0; j < bias.size(); ++j) bias[j] = float(j) * 0.25f;
    for (int threads : {1, 2}) {
      tg::cpu::ThreadPool pool(threads);
      const Launcher launcher = threads == 1 ? Launcher::serial() : tg::cpu::make_launcher(pool);
      std::vector<float> d(size_t(p.m * p.n), -1.0f);
      const ScaleBiasGemm::Arguments args{p, a.operand(), b.operand(), {2.0f, bias.data(), d.data(), p.n}};
      if (threads == 1) {
        ScaleBiasGemm::run(args, launcher);
      } else {
        test::AlignedBuffer workspace(ScaleBiasGemm::workspace_bytes({p, a.operand(), b.operand()}, threads));
        ScaleBiasGemm::run(args, launcher, workspace.get());
      }
      for (int64_t i = 0; i < p.m; ++i) {
        for (int64_t j = 0; j < p.n; ++j) {
          const float got = d[size_t(i * p.n + j)];
          const float acc = (got - bias[size_t(j)]) / 2.0f;
          ASSERT_TRUE(ref.close(i, j, acc, p.k + 2))
              << "m=" << p.m << " threads=" << threads << " at (" << i << ", " << j << "): " << got;
        }
      }
    }
  }
}

// Records the row strips a kVisitsRowStrips epilogue receives, checking each against the
// reference when it arrives (so every K block has been summed by then).
class StripRecorder {
 public:
  static constexpr bool kVisitsRowStrips = true;
  struct Visit {
    AccBlock acc;
    int thread;
    bool final_sums;
  };
  struct Arguments {
    const Reference* ref;
    int64_t k;
    std::mutex* mutex;
    std::vector<Visit>* visits;
    BlockGrid* grid;
  };
  StripRecorder(const Arguments& args, const GemmShape&, const BlockGrid& grid, int) : args_(args) {
    *args_.grid = grid;
  }
  void visit(const AccBlock& acc, int thread) const {
    bool final_sums = true;
    for (int64_t i = 0; i < acc.rows; ++i) {
      for (int64_t j = 0; j < acc.cols; ++j) {
        final_sums = final_sums && args_.ref->close(acc.row0 + i, acc.col0 + j, acc.data[i * acc.ld + j], args_.k + 2);
      }
    }
    const std::lock_guard lock(*args_.mutex);
    args_.visits->push_back({acc, thread, final_sums});
  }
  void finish(const Launcher&) const {}

 private:
  Arguments args_;
};

TEST(MatmulVisitor, RowStripsCoverEachBlockInOrderFromOneThread) {
  using Gemm = kernel::MatmulVisitor<host::BlockMmad, StripRecorder, host::BlockScheduler>;
  std::mt19937 rng(3);
  // Several K blocks; two block rows; the streaming path (whole blocks); K = 0.
  for (const GemmShape& p :
       {GemmShape{37, 90, 260}, GemmShape{731, 41, 17}, GemmShape{1, 70, 33}, GemmShape{5, 9, 0}}) {
    const TestMatrix a(rng, ElementType::F32, p.m, p.k, false, 0);
    const TestMatrix b(rng, ElementType::F32, p.k, p.n, false, 0);
    const Reference ref(a, b, p);
    for (int threads : {1, 2}) {
      tg::cpu::ThreadPool pool(threads);
      std::mutex mutex;
      std::vector<StripRecorder::Visit> visits;
      BlockGrid grid;
      Gemm::run({p, a.operand(), b.operand(), {&ref, p.k, &mutex, &visits, &grid}}, tg::cpu::make_launcher(pool));
      // Per block (in the order its strips arrived): consecutive rows from the block's top to its
      // bottom, all columns, one thread, final sums.
      std::vector<int64_t> next_row(size_t(grid.row_blocks(p.m) * grid.col_blocks(p.n)), -1);
      std::vector<int> owner(next_row.size(), -1);
      for (const StripRecorder::Visit& v : visits) {
        const int64_t bi = v.acc.row0 / grid.block_rows, bj = v.acc.col0 / grid.block_cols;
        const size_t block = size_t(bi * grid.col_blocks(p.n) + bj);
        if (next_row[block] < 0) next_row[block] = bi * grid.block_rows, owner[block] = v.thread;
        EXPECT_EQ(v.acc.row0, next_row[block]) << "m=" << p.m << " threads=" << threads;
        EXPECT_EQ(v.acc.col0, bj * grid.block_cols);
        EXPECT_EQ(v.acc.cols, std::min(grid.block_cols, p.n - v.acc.col0));
        EXPECT_EQ(v.thread, owner[block]);
        EXPECT_TRUE(v.final_sums) << "strip at row " << v.acc.row0 << " before the last K block";
        // The packed path hands over one A panel at a time, while it is in cache.
        if (p.m > 1 && p.k > 0) {
          EXPECT_LE(v.acc.rows, host::kTileRows);
        }
        next_row[block] = v.acc.row0 + v.acc.rows;
      }
      for (size_t block = 0; block < next_row.size(); ++block) {
        const int64_t bi = int64_t(block) / grid.col_blocks(p.n);
        EXPECT_EQ(next_row[block], std::min((bi + 1) * grid.block_rows, p.m)) << "block " << block << " not covered";
      }
    }
  }
}

// ---- the scheduler's cut ----

TEST(BlockScheduler, CoversEveryElementOnceWithinTheLimits) {
  const BlockLimits limits{12, 32, 120, 96};
  for (int threads : {1, 2, 3, 4}) {
    for (int64_t m : {1, 5, 12, 13, 119, 120, 121, 700}) {
      for (int64_t n : {1, 31, 32, 95, 97, 500}) {
        for (int64_t k : {0, 1, 4096}) {
          const host::BlockScheduler s({m, n, k}, limits, threads);
          const BlockGrid& g = s.grid();
          ASSERT_EQ(g.block_rows % limits.tile_rows, 0);
          ASSERT_EQ(g.block_cols % limits.tile_cols, 0);
          ASSERT_LE(g.block_rows, limits.max_rows);
          ASSERT_LE(g.block_cols, std::max(limits.max_cols, limits.tile_cols));
          ASSERT_EQ(s.blocks(), g.row_blocks(m) * g.col_blocks(n));
          std::vector<int> covered(size_t(m * n), 0);
          for (int64_t item = 0; item < s.blocks(); ++item) {
            const BlockRect r = s.block(item);
            for (int64_t i = r.row0; i < r.row0 + r.rows; ++i) {
              for (int64_t j = r.col0; j < r.col0 + r.cols; ++j) ++covered[size_t(i * n + j)];
            }
          }
          for (size_t e = 0; e < covered.size(); ++e) {
            ASSERT_EQ(covered[e], 1) << "m=" << m << " n=" << n << " k=" << k << " threads=" << threads;
          }
        }
      }
    }
  }
}

TEST(BlockScheduler, SmallMIsSplitByColumnsSoEveryThreadWorks) {
  const BlockLimits limits{12, 32, 720, 384};
  for (int64_t m : {1, 8, 64, 512}) {
    for (int threads : {2, 3, 4}) {
      const host::BlockScheduler s({m, 4096, 4096}, limits, threads);
      EXPECT_EQ(s.grid().row_blocks(m), 1);
      EXPECT_GE(s.blocks(), threads) << "m=" << m;
      EXPECT_EQ(s.blocks() % threads, 0) << "m=" << m << ": a thread would be left the last block alone";
    }
  }
  // Too little work to be worth another thread: one block.
  EXPECT_EQ(host::BlockScheduler({4, 64, 8}, limits, 2).blocks(), 1);
}

// Several threads get kMinBlocksPerThread blocks each where the work allows, so that a thread
// slowed for a moment leaves its partner more blocks instead of holding it up; where it does not,
// the count stays a multiple of the thread count; one thread gets as few blocks as the limits
// allow.
TEST(BlockScheduler, EveryThreadGetsSeveralBlocksWhereTheWorkAllows) {
  const BlockLimits limits{12, 32, 720, 256};
  for (int threads : {2, 3, 4}) {
    const host::BlockScheduler s({512, 768, 64}, limits, threads);
    EXPECT_GE(s.blocks(), host::BlockScheduler::kMinBlocksPerThread * threads) << "threads=" << threads;
    EXPECT_EQ(s.blocks() % threads, 0) << "threads=" << threads;
  }
  EXPECT_EQ(host::BlockScheduler({512, 768, 64}, limits, 1).blocks(), 3);  // the 256-column limit
  // 512 x 256 x 4: 4 blocks keep enough work, 8 would not.
  const host::BlockScheduler small({512, 256, 4}, limits, 2);
  EXPECT_EQ(small.blocks(), 4);
  EXPECT_EQ(small.grid().block_cols, 64);
}

// Blocks taken at the same time (the first `threads` items, then the next) never lie side by
// side in one block row: with one block row they are blocks/threads apart; with block rows to
// spare they are in different rows.
TEST(BlockScheduler, BlocksTakenTogetherAreNotNeighbours) {
  const BlockLimits limits{12, 32, 720, 256};
  for (int threads : {2, 4}) {
    const host::BlockScheduler s({512, 768, 64}, limits, threads);
    ASSERT_EQ(s.grid().row_blocks(512), 1);
    const int64_t apart = s.blocks() / threads * s.grid().block_cols;
    for (int64_t item = 0; item + 1 < s.blocks(); ++item) {
      if ((item + 1) % threads == 0) continue;  // the next item starts another wave
      EXPECT_EQ(s.block(item + 1).col0 - s.block(item).col0, apart) << "threads=" << threads << " item=" << item;
    }
  }
  const host::BlockScheduler rows({1440, 512, 64}, limits, 2);  // two block rows for two threads
  ASSERT_EQ(rows.grid().row_blocks(1440), 2);
  for (int64_t item = 0; item + 1 < rows.blocks(); item += 2) {
    EXPECT_NE(rows.block(item).row0, rows.block(item + 1).row0) << "item=" << item;
  }
}

// With block rows to spare, the rows go in bands of one per thread: item and item + threads lie in
// the same block row (the thread finds its packed A in cache), the items taken together in
// different rows and columns, and a band's rows are walked to their ends before the next band.
TEST(BlockScheduler, EachThreadWalksAlongABlockRowOfItsOwn) {
  const BlockLimits limits{12, 32, 120, 64};
  for (int threads : {1, 2, 3}) {
    const int64_t m = 120 * 7, n = 64 * 6;  // 7 block rows of 6 blocks: the last band is short
    const host::BlockScheduler s({m, n, 512}, limits, threads);
    ASSERT_EQ(s.grid().row_blocks(m), 7);
    ASSERT_EQ(s.grid().col_blocks(n), 6);
    const int64_t full_band_items = int64_t(threads) * 6 * (7 / threads);
    for (int64_t item = 0; item + threads < full_band_items; ++item) {
      if ((item % (int64_t(threads) * 6)) + threads >= int64_t(threads) * 6) continue;  // the band ends
      EXPECT_EQ(s.block(item).row0, s.block(item + threads).row0) << "threads=" << threads << " item=" << item;
    }
    for (int64_t item = 0; item + 1 < full_band_items; ++item) {
      if ((item + 1) % threads == 0) continue;
      EXPECT_NE(s.block(item).row0, s.block(item + 1).row0) << "threads=" << threads << " item=" << item;
      EXPECT_NE(s.block(item).col0, s.block(item + 1).col0) << "threads=" << threads << " item=" << item;
    }
    // The last band, one row for all threads: the blocks taken together lie 6 / threads apart.
    for (int64_t item = full_band_items; item + 1 < s.blocks(); ++item) {
      if ((item + 1 - full_band_items) % threads == 0) continue;
      EXPECT_EQ(s.block(item + 1).col0 - s.block(item).col0, 6 / threads * 64)
          << "threads=" << threads << " item=" << item;
    }
  }
}

// Blocks of one row are as even as whole tiles allow: no thread gets a runt block beside a
// partner's full one (256 x 256 on 2 threads was cut into 224 + 32 columns).
TEST(BlockScheduler, ColumnBlocksAreEven) {
  const BlockLimits limits{12, 32, 720, 384};
  for (int threads : {2, 3, 4}) {
    for (int64_t m : {1, 64, 256, 700}) {
      for (int64_t n : {64, 96, 256, 320, 512, 1000, 3072}) {
        const host::BlockScheduler s({m, n, 512}, limits, threads);
        const int64_t tiles = (n + limits.tile_cols - 1) / limits.tile_cols;
        const int64_t blocks = s.grid().col_blocks(n);
        const int64_t block_tiles = s.grid().block_cols / limits.tile_cols;
        EXPECT_LE(block_tiles * blocks - tiles, blocks - 1)
            << "m=" << m << " n=" << n << " threads=" << threads << ": " << blocks << " blocks of " << block_tiles
            << " tiles for " << tiles;
      }
    }
  }
}

// ---- the Launcher over the thread pool ----

TEST(Launcher, RunsEveryItemOnceOnValidThreads) {
  for (int threads : {1, 2, 4}) {
    tg::cpu::ThreadPool pool(threads);
    const Launcher launcher = tg::cpu::make_launcher(pool);
    EXPECT_EQ(launcher.num_threads, threads);
    for (int64_t n : {0, 1, 2, 5, 1000}) {
      std::vector<std::atomic<int>> runs(static_cast<size_t>(n));
      std::atomic<bool> bad_thread{false};
      auto fn = [&](int64_t item, int thread) {
        runs[size_t(item)].fetch_add(1);
        if (thread < 0 || thread >= threads) bad_thread = true;
      };
      kernel::launch(launcher, n, fn);
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(runs[size_t(i)].load(), 1) << "item " << i;
      EXPECT_FALSE(bad_thread.load());
    }
    // One item runs on the caller alone.
    std::thread::id ran_on;
    auto one = [&](int64_t, int) { ran_on = std::this_thread::get_id(); };
    kernel::launch(launcher, 1, one);
    EXPECT_EQ(ran_on, std::this_thread::get_id());
  }
}

// ---- packing's f16 conversion ----

TEST(GemmConversion, HalfToFloatIsExactForEveryValue) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const float got = host::half_to_float(uint16_t(bits));
    const float want = f16_to_f32(f16{uint16_t(bits)});
    if (want != want) {
      ASSERT_NE(got, got) << std::hex << bits;
    } else {
      ASSERT_EQ(std::memcmp(&got, &want, sizeof got), 0) << std::hex << bits << ": " << got << " vs " << want;
    }
  }
}

}  // namespace
}  // namespace tg::evg
