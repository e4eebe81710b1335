// The library's GEMM (src/cpu/gemm.h) on every ISA this machine has: the micro-kernels, the whole
// GEMM against a double-precision reference over shapes with partial edge tiles, sizes 0, 1 and
// primes, every storage order, f16/bf16 inputs, padded leading dimensions and 1..4 threads, and
// an epilogue that records every block it is given.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "gemm.h"
#include "gemm_test_utils.h"
#include "launcher.h"
#include "thread_pool.h"
#include "tilegraph/core/error.h"
#include "tilegraph/cpu/cpu_backend.h"
#include "vec.h"

namespace tg::cpu {
namespace {

using evg::ElementType;
using test::AlignedBuffer;
using test::Reference;
using test::TestMatrix;

// ---- micro-kernels ----

TEST(GemmMicroKernel, EveryRowCountAgainstReference) {
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (Isa isa : runnable_isas()) {
    const GemmKernels& kernels = gemm_kernels(isa);
    const int cols = kernels.tile_cols;
    for (int rows = 1; rows <= kernels.tile_rows; ++rows) {
      for (int64_t kc : {0, 1, 3, 17, 256}) {
        for (bool accumulate : {false, true}) {
          // A's rows packed (lda = kc) and read in place from a wider matrix.
          const int64_t lda = accumulate ? kc + 7 : kc;
          std::vector<float> a(size_t(lda * rows)), b(size_t(kc * cols));
          for (float& x : a) x = dist(rng);
          for (float& x : b) x = dist(rng);
          const int64_t ldc = cols + 5;
          std::vector<float> c(size_t(rows * ldc));
          for (float& x : c) x = dist(rng);
          const std::vector<float> before = c;
          kernels.micro_kernel(rows, kc, a.data(), lda, b.data(), c.data(), ldc, accumulate);
          for (int i = 0; i < rows; ++i) {
            for (int j = 0; j < ldc; ++j) {
              const float got = c[size_t(i * ldc + j)];
              if (j >= cols) {
                ASSERT_EQ(got, before[size_t(i * ldc + j)]) << "wrote outside the tile";
                continue;
              }
              double want = accumulate ? before[size_t(i * ldc + j)] : 0.0, mag = std::fabs(want);
              for (int64_t k = 0; k < kc; ++k) {
                want += double(a[size_t(i * lda + k)]) * b[size_t(k * cols + j)];
                mag += std::fabs(double(a[size_t(i * lda + k)]) * b[size_t(k * cols + j)]);
              }
              ASSERT_NEAR(got, want, double(kc + 4) * std::ldexp(1.0, -23) * mag)
                  << isa_name(isa) << " rows=" << rows << " kc=" << kc << " accumulate=" << accumulate << " at (" << i
                  << ", " << j << ")";
            }
          }
        }
      }
    }
  }
}

// ---- whole GEMM ----

struct Case {
  evg::GemmShape shape;
  ElementType a_type, b_type;
  bool a_transposed, b_transposed;
  int64_t pad;  // extra elements per storage line of A, B and D
  int threads;
  evg::GemmTuning tuning{};
};

std::string describe(const evg::GemmTuning& tuning) {
  std::string out;
  if (tuning.streams_b_in_one_pass) out += " B in one pass";
  if (tuning.b_prefetch_tiles > 1) out += " B prefetched two tiles ahead";
  if (tuning.b_tile_columns == 8) out += " 8 columns a tile";
  return out;
}

std::string describe(const Case& c, Isa isa) {
  return std::string(isa_name(isa)) + " m=" + std::to_string(c.shape.m) + " n=" + std::to_string(c.shape.n) +
         " k=" + std::to_string(c.shape.k) + " A " + test::element_name(c.a_type) + (c.a_transposed ? "^T" : "") +
         " B " + test::element_name(c.b_type) + (c.b_transposed ? "^T" : "") + " pad=" + std::to_string(c.pad) +
         " threads=" + std::to_string(c.threads) + describe(c.tuning);
}

// The tunings that change how a problem runs where few rows of A may stream B (gemv.h's 8 rows at
// most): B in one pass or not, prefetched one tile ahead or two, 4 or 8 columns a tile.
std::vector<evg::GemmTuning> tunings_of(const evg::GemmShape& shape) {
  if (shape.m > 8) return {{}};
  std::vector<evg::GemmTuning> tunings;
  for (bool one_pass : {false, true}) {
    for (int tiles : {1, 2}) tunings.push_back({.streams_b_in_one_pass = one_pass, .b_prefetch_tiles = tiles});
  }
  for (int tiles : {1, 2}) tunings.push_back({.b_prefetch_tiles = tiles, .b_tile_columns = 8});
  return tunings;
}

// The operands of a case and their reference, built once for every ISA and thread count.
struct Operands {
  TestMatrix a, b;
  Reference ref;
  Operands(const Case& c, std::mt19937& rng)
      : a(rng, c.a_type, c.shape.m, c.shape.k, c.a_transposed, c.pad),
        b(rng, c.b_type, c.shape.k, c.shape.n, c.b_transposed, c.pad),
        ref(a, b, c.shape) {}
};

void run_case(const Case& c, const Operands& ops, Isa isa) {
  const evg::GemmShape& p = c.shape;
  const int64_t ldd = p.n + c.pad;
  // A sentinel in every slot: what the GEMM must not write keeps it.
  const float sentinel = -12345.0f;
  std::vector<float> d(size_t(std::max<int64_t>(1, p.m * ldd)), sentinel);
  ThreadPool pool(c.threads);
  const GemmKernels& kernels = gemm_kernels(isa);
  const GemmPlan plan = kernels.plan({p, ops.a.operand(), ops.b.operand()}, c.threads, c.tuning);
  AlignedBuffer workspace(plan.workspace_bytes);
  kernels.gemm(plan, ops.a.operand(), ops.b.operand(), d.data(), ldd, make_launcher(pool), workspace.get());
  for (int64_t i = 0; i < p.m; ++i) {
    for (int64_t j = 0; j < ldd; ++j) {
      const float got = d[size_t(i * ldd + j)];
      if (j >= p.n) {
        ASSERT_EQ(got, sentinel) << describe(c, isa) << ": wrote padding at (" << i << ", " << j << ")";
      } else {
        ASSERT_TRUE(ops.ref.close(i, j, got, p.k)) << describe(c, isa) << " at (" << i << ", " << j << "): got " << got
                                                   << ", want " << ops.ref.value[size_t(i * p.n + j)];
      }
    }
  }
}

void run_case_on_every_isa(const Case& c, std::mt19937& rng) {
  const Operands ops(c, rng);
  for (Isa isa : runnable_isas()) {
    for (const evg::GemmTuning& tuning : tunings_of(c.shape)) {
      Case tuned = c;
      tuned.tuning = tuning;
      run_case(tuned, ops, isa);
    }
  }
}

// Shapes: empty, single elements, primes, whole and partial micro tiles, K across several packed
// blocks, M across several row blocks, N across several column blocks, and the M = 1 GEMV.
const std::vector<evg::GemmShape> kShapes = {{0, 5, 3},     {5, 0, 3},     {4, 6, 0},     {1, 1, 1},
                                             {1, 37, 129},  {1, 1000, 17}, {2, 3, 5},     {13, 31, 7},
                                             {12, 32, 256}, {25, 65, 257}, {7, 1, 64},    {97, 389, 300},
                                             {761, 23, 31}, {3, 1031, 5},  {48, 96, 513}, {20, 40, 1100}};

TEST(Gemm, EveryStorageOrderAgainstReference) {
  std::mt19937 rng(2);
  for (const evg::GemmShape& shape : kShapes) {
    for (int order = 0; order < 4; ++order) {
      run_case_on_every_isa({shape, ElementType::F32, ElementType::F32, bool(order & 1), bool(order & 2), 0, 1}, rng);
    }
  }
}

// K = 1031 gives few-row GEMVs columns of over 2 KiB in every type: the path that prefetches the
// next tile's columns (gemv.h).
TEST(Gemm, HalfPrecisionInputsAndPaddedStrides) {
  std::mt19937 rng(3);
  const ElementType types[] = {ElementType::F32, ElementType::F16, ElementType::BF16};
  for (const evg::GemmShape& shape :
       {evg::GemmShape{1, 45, 70}, evg::GemmShape{29, 67, 41}, evg::GemmShape{40, 130, 300},
        evg::GemmShape{1, 45, 1031}, evg::GemmShape{5, 21, 1031}}) {
    for (ElementType at : types) {
      for (ElementType bt : types) {
        for (int order = 0; order < 4; ++order) {
          run_case_on_every_isa({shape, at, bt, bool(order & 1), bool(order & 2), 3 + order, 1}, rng);
        }
      }
    }
  }
}

// The decode GEMV (M = 1, column-major B) reduces the sums of a tile's 4 (or 8) columns together:
// a column must get the same bits whether the call covers 64 columns or only its own tile, on
// every ISA, type, tuning and K (1031: the path that prefetches the next tile, or reads B in one
// pass), since threads split calls by columns. They split them into blocks of whole tiles: 3000
// columns on three threads, blocks of 256 columns with tiles of 8 (252 were they cut as tiles of
// 4, which would put a tile of 8 across two blocks).
TEST(Gemm, GemvColumnsKeepTheirBitsWhateverTheCallCovers) {
  std::mt19937 rng(9);
  for (Isa isa : runnable_isas()) {
    const GemmKernels& kernels = gemm_kernels(isa);
    for (const evg::GemmTuning& tuning : tunings_of({1, 64, 1031})) {
      for (ElementType bt : {ElementType::F32, ElementType::F16, ElementType::BF16}) {
        for (int64_t k : {16, 64, 129, 1031}) {
          const int64_t n = k == 1031 && bt == ElementType::F16 ? 3000 : 64;
          const int threads = n == 3000 ? 3 : 1;
          // bf16 against bf16: the pairs of AVX512_BF16's GEMV.
          const TestMatrix a(rng, bt == ElementType::BF16 ? ElementType::BF16 : ElementType::F32, 1, k, false, 0);
          const TestMatrix b(rng, bt, k, n, true, 3);
          auto run = [&](int64_t first, int64_t cols, int call_threads) {
            evg::MatrixOperand bo = b.operand();
            bo.data = static_cast<const char*>(bo.data) + first * bo.ld * evg::element_bytes(bt);
            const evg::GemmShape p{1, cols, k};
            const GemmPlan plan = kernels.plan({p, a.operand(), bo}, call_threads, tuning);
            AlignedBuffer workspace(plan.workspace_bytes);
            std::vector<float> d(static_cast<size_t>(cols));
            ThreadPool pool(call_threads);
            kernels.gemm(plan, a.operand(), bo, d.data(), cols, make_launcher(pool), workspace.get());
            return d;
          };
          const std::vector<float> all = run(0, n, threads);
          const int64_t width = tuning.b_tile_columns;
          for (int64_t tile = 0; tile + width <= n; tile += width) {
            const std::vector<float> own = run(tile, width, 1);
            for (int64_t j = 0; j < width; ++j) {
              ASSERT_EQ(std::memcmp(&all[size_t(tile + j)], &own[size_t(j)], sizeof(float)), 0)
                  << isa_name(isa) << " " << test::element_name(bt) << " k=" << k << describe(tuning) << " column "
                  << tile + j << ": " << all[size_t(tile + j)] << " in a call over " << n << " columns on " << threads
                  << " threads, " << own[size_t(j)] << " alone";
            }
          }
        }
      }
    }
  }
}

// bf16 activations (A row-major) against bf16 weights (B column-major), the layout whose K pairs
// AVX512_BF16 multiplies with vdpbf16ps and AMX with tdpbf16ps tiles (K a multiple of 32): partial
// tiles, K across several blocks of pairs (1024 values each), even padding (pairs) and odd padding
// or K (the f32 path on AVX512_BF16), M from the streamed GEMV's 1 and 8 rows (any K: its vectors
// hold 32 values, odd K a partial one) to the first row count that is packed. For the tiles:
// token counts around their groups of 16 and blocks of 128, weight counts around their panels of
// 16 and 32 and blocks of 256, and K of one tile step to many.
TEST(Gemm, Bf16ActivationsAgainstBf16WeightsInPairs) {
  std::mt19937 rng(7);
  for (const evg::GemmShape& shape :
       {evg::GemmShape{9, 37, 2},       evg::GemmShape{13, 31, 30},    evg::GemmShape{25, 65, 514},
        evg::GemmShape{40, 130, 300},   evg::GemmShape{97, 389, 1030}, evg::GemmShape{761, 23, 32},
        evg::GemmShape{29, 67, 41},     evg::GemmShape{1, 37, 1},      evg::GemmShape{1, 70, 97},
        evg::GemmShape{3, 45, 64},      evg::GemmShape{8, 33, 1031},   evg::GemmShape{5, 9, 2048},
        evg::GemmShape{9, 16, 32},      evg::GemmShape{16, 17, 64},    evg::GemmShape{17, 31, 96},
        evg::GemmShape{32, 33, 128},    evg::GemmShape{33, 64, 160},   evg::GemmShape{129, 257, 256},
        evg::GemmShape{150, 300, 1024}, evg::GemmShape{64, 48, 2048}}) {
    for (int64_t pad : {0, 2, 1}) {
      for (int threads : {1, 2}) {
        run_case_on_every_isa({shape, ElementType::BF16, ElementType::BF16, false, true, pad, threads}, rng);
      }
    }
  }
}

// The AMX table's GEMM puts bf16 x bf16 on AMX-BF16 tiles: its own table where the CPU has
// AMX-BF16 (the test above then checks the tiles), the AVX512_BF16 one where it has AMX-INT8 only.
TEST(Gemm, AmxTableMultipliesOnTilesWhereTheCpuHasAmxBf16) {
  if (best_isa() != Isa::AMX) GTEST_SKIP() << "this CPU has no AMX";
  EXPECT_EQ(gemm_kernels(Isa::AMX).isa, cpu_features().amx_bf16 ? Isa::AMX : Isa::AVX512_BF16);
}

// An f32 row-major A is read in place unless a panel's rows would crowd one L1 set: rows a
// multiple of 4 KiB apart all share one, which more than 6 rows (AVX-512's 12, not AVX2's 6 or
// the portable 4) may not; then A is packed. Both ways on partial panels, padded strides and
// several K blocks; reading in place needs no workspace for A.
TEST(Gemm, RowMajorF32AReadInPlaceOrPacked) {
  std::mt19937 rng(10);
  struct StrideCase {
    int64_t k, pad;
    bool rows_share_one_set;
  };
  const StrideCase strides[] = {{1024, 0, true},   {1024, 1, false}, {512, 0, false}, {600, 424, true},
                                {1100, 948, true}, {1100, 5, false}, {300, 3, false}};
  for (const StrideCase& s : strides) {
    const Case c{{37, 70, s.k}, ElementType::F32, ElementType::F32, false, false, s.pad, 1};
    const Operands ops(c, rng);
    for (Isa isa : runnable_isas()) {
      run_case(c, ops, isa);
      // The same problem with a column-major A is packed: compare the workspaces.
      const TestMatrix a_packed(rng, ElementType::F32, c.shape.m, c.shape.k, true, s.pad);
      const GemmKernels& kernels = gemm_kernels(isa);
      const size_t bytes = kernels.plan({c.shape, ops.a.operand(), ops.b.operand()}, 1, {}).workspace_bytes;
      const size_t packed_bytes = kernels.plan({c.shape, a_packed.operand(), ops.b.operand()}, 1, {}).workspace_bytes;
      if (!s.rows_share_one_set || kernels.tile_rows <= 6) {
        EXPECT_LE(bytes + size_t(c.shape.m * c.shape.k) * sizeof(float), packed_bytes)
            << describe(c, isa) << ": A should be read in place";
      } else {
        EXPECT_EQ(bytes, packed_bytes) << describe(c, isa) << ": A should be packed";
      }
    }
  }
}

TEST(Gemm, OneToFourThreads) {
  std::mt19937 rng(4);
  for (const evg::GemmShape& shape :
       {evg::GemmShape{1, 2000, 300}, evg::GemmShape{1, 999, 1031}, evg::GemmShape{8, 777, 70},
        evg::GemmShape{750, 400, 300}, evg::GemmShape{130, 1500, 9}}) {
    const Case base{shape, ElementType::F32, ElementType::F16, false, true, 1, 1};
    const Operands ops(base, rng);
    for (Isa isa : runnable_isas()) {
      for (const evg::GemmTuning& tuning : tunings_of(shape)) {
        for (int threads = 1; threads <= 4; ++threads) {
          Case c = base;
          c.threads = threads;
          c.tuning = tuning;
          run_case(c, ops, isa);
        }
      }
    }
  }
}

// ---- the epilogue contract ----

// Records every block with the accumulator's values at the moment it is visited.
struct Recorder {
  const Reference* ref = nullptr;
  int64_t k = 0;
  std::mutex mutex;
  evg::GemmShape problem;
  evg::BlockGrid grid;
  int num_threads = 0;
  int starts = 0, finishes = 0;
  size_t visits_at_finish = 0;
  std::vector<evg::AccBlock> blocks;
  std::vector<int> threads;
  std::atomic<int64_t> wrong_values{0};

  static evg::EpilogueCallbacks callbacks(Recorder& r) {
    evg::EpilogueCallbacks cb;
    cb.context = &r;
    cb.start = [](void* self, const evg::GemmShape& p, const evg::BlockGrid& g, int threads) {
      auto& r = *static_cast<Recorder*>(self);
      r.problem = p;
      r.grid = g;
      r.num_threads = threads;
      ++r.starts;
    };
    cb.visit = [](void* self, const evg::AccBlock& acc, int thread) {
      auto& r = *static_cast<Recorder*>(self);
      // The block must already hold the sum over all of K.
      for (int64_t i = 0; i < acc.rows; ++i) {
        for (int64_t j = 0; j < acc.cols; ++j) {
          if (!r.ref->close(acc.row0 + i, acc.col0 + j, acc.data[i * acc.ld + j], r.k)) ++r.wrong_values;
        }
      }
      std::lock_guard lock(r.mutex);
      r.blocks.push_back(acc);
      r.threads.push_back(thread);
    };
    cb.finish = [](void* self, const evg::Launcher&) {
      auto& r = *static_cast<Recorder*>(self);
      std::lock_guard lock(r.mutex);
      ++r.finishes;
      r.visits_at_finish = r.blocks.size();
    };
    return cb;
  }
};

TEST(GemmEpilogue, EveryElementVisitedOnceAfterTheWholeSum) {
  std::mt19937 rng(5);
  // The last: bf16 activations, which AMX multiplies on its tiles.
  const std::pair<evg::GemmShape, ElementType> cases[] = {{{1, 3000, 100}, ElementType::F32},
                                                          {{5, 900, 600}, ElementType::F32},
                                                          {{760, 300, 270}, ElementType::F32},
                                                          {{31, 17, 0}, ElementType::F32},
                                                          {{300, 290, 256}, ElementType::BF16}};
  for (const auto& [p, a_type] : cases) {
    const TestMatrix a(rng, a_type, p.m, p.k, false, 0);
    const TestMatrix b(rng, ElementType::BF16, p.k, p.n, true, 0);
    const Reference ref(a, b, p);
    for (Isa isa : runnable_isas()) {
      for (int threads : {1, 2, 3}) {
        Recorder rec;
        rec.ref = &ref;
        rec.k = p.k;
        ThreadPool pool(threads);
        const GemmKernels& kernels = gemm_kernels(isa);
        const GemmPlan plan = kernels.plan({p, a.operand(), b.operand()}, threads, {});
        AlignedBuffer workspace(plan.workspace_bytes);
        kernels.gemm_with_epilogue(plan, a.operand(), b.operand(), Recorder::callbacks(rec), make_launcher(pool),
                                   workspace.get());
        const std::string where = std::string(isa_name(isa)) + " threads=" + std::to_string(threads) +
                                  " m=" + std::to_string(p.m) + " n=" + std::to_string(p.n) +
                                  " k=" + std::to_string(p.k);
        ASSERT_EQ(rec.starts, 1) << where;
        ASSERT_EQ(rec.finishes, 1) << where;
        EXPECT_EQ(rec.num_threads, threads) << where;
        EXPECT_EQ(rec.problem.m, p.m);
        EXPECT_EQ(rec.visits_at_finish, rec.blocks.size()) << where << ": a block visited after finish";
        EXPECT_EQ(rec.wrong_values.load(), 0) << where << ": a block visited before its sum was complete";
        std::vector<int> covered(size_t(p.m * p.n), 0);
        for (size_t i = 0; i < rec.blocks.size(); ++i) {
          const evg::AccBlock& blk = rec.blocks[i];
          EXPECT_GE(rec.threads[i], 0);
          EXPECT_LT(rec.threads[i], threads) << where;
          // Row strips of the blocks of the grid the epilogue was given (block.h, kVisitsRowStrips).
          const int64_t block_end = std::min((blk.row0 / rec.grid.block_rows + 1) * rec.grid.block_rows, p.m);
          EXPECT_EQ(blk.col0 % rec.grid.block_cols, 0) << where;
          EXPECT_EQ(blk.cols, std::min(rec.grid.block_cols, p.n - blk.col0)) << where;
          EXPECT_GE(blk.rows, 1) << where;
          EXPECT_LE(blk.row0 + blk.rows, block_end) << where;
          for (int64_t r = 0; r < blk.rows; ++r) {
            for (int64_t c = 0; c < blk.cols; ++c) ++covered[size_t((blk.row0 + r) * p.n + blk.col0 + c)];
          }
        }
        EXPECT_TRUE(std::ranges::all_of(covered, [](int n) { return n == 1; }))
            << where << ": an element not visited exactly once";
      }
    }
  }
}

// An epilogue that offers its output gets blocks summed there when K fits one K block (or on
// the streaming path): visit then finds the accumulator in the output, and nothing past the
// output's columns is written.
TEST(GemmEpilogue, SumsInTheOfferedOutput) {
  constexpr float kUntouched = -12345.5f;
  std::mt19937 rng(8);
  for (const evg::GemmShape& p :
       {evg::GemmShape{50, 64, 100}, evg::GemmShape{1, 300, 70}, evg::GemmShape{40, 70, 600}}) {
    const TestMatrix a(rng, ElementType::F32, p.m, p.k, false, 0);
    const TestMatrix b(rng, ElementType::F32, p.k, p.n, false, 0);
    const Reference ref(a, b, p);
    for (Isa isa : runnable_isas()) {
      const int64_t ldd = p.n + 3;
      std::vector<float> d(size_t(p.m * ldd), kUntouched);
      Recorder rec;
      rec.ref = &ref;
      rec.k = p.k;
      evg::EpilogueCallbacks callbacks = Recorder::callbacks(rec);
      callbacks.output = d.data();
      callbacks.output_ld = ldd;
      ThreadPool pool(2);
      const GemmKernels& kernels = gemm_kernels(isa);
      const GemmPlan plan = kernels.plan({p, a.operand(), b.operand()}, 2, {});
      AlignedBuffer workspace(plan.workspace_bytes);
      kernels.gemm_with_epilogue(plan, a.operand(), b.operand(), callbacks, make_launcher(pool), workspace.get());
      const std::string where = std::string(isa_name(isa)) + " m=" + std::to_string(p.m) + " n=" + std::to_string(p.n) +
                                " k=" + std::to_string(p.k);
      EXPECT_EQ(rec.wrong_values.load(), 0) << where;
      int64_t in_output = 0;
      for (const evg::AccBlock& blk : rec.blocks) {
        if (blk.data != d.data() + blk.row0 * ldd + blk.col0) continue;
        EXPECT_EQ(blk.ld, ldd) << where;
        in_output += blk.rows * blk.cols;
      }
      // 64 columns are whole tiles of every ISA; 300 columns of the streaming path are whole
      // 4-column tiles, of which the last block gets 44; K = 600 takes two K blocks of 512: the
      // buffer.
      EXPECT_EQ(in_output, p.k <= 512 ? p.m * p.n : 0) << where;
      for (int64_t i = 0; i < p.m; ++i) {
        for (int64_t j = p.n; j < ldd; ++j) EXPECT_EQ(d[size_t(i * ldd + j)], kUntouched) << where << " wrote padding";
      }
    }
  }
}

// ---- errors ----

TEST(GemmErrors, BadArgumentsAreRejected) {
  const GemmKernels& kernels = gemm_kernels(best_isa());
  ThreadPool pool(2);
  const evg::Launcher launcher = make_launcher(pool);
  std::vector<float> a(64, 1.0f), b(64, 1.0f), d(64, 0.0f);
  const evg::MatrixOperand op_a{a.data(), ElementType::F32, 8, false};
  const evg::MatrixOperand op_b{b.data(), ElementType::F32, 8, false};
  const evg::GemmShape p{8, 8, 8};
  const GemmPlan plan = kernels.plan({p, op_a, op_b}, 2, {});
  AlignedBuffer workspace(plan.workspace_bytes + 64);
  auto expect_error = [&](const std::string& needle, auto&& call) {
    try {
      call();
      ADD_FAILURE() << "no error for " << needle;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect_error("negative problem size", [&] {
    const GemmPlan negative = kernels.plan({{-1, 8, 8}, op_a, op_b}, 2, {});
    kernels.gemm(negative, op_a, op_b, d.data(), 8, launcher, workspace.get());
  });
  expect_error("operand A has no data", [&] {
    kernels.gemm(plan, {nullptr, ElementType::F32, 8, false}, op_b, d.data(), 8, launcher, workspace.get());
  });
  expect_error("operand B has a negative leading dimension", [&] {
    kernels.gemm(plan, op_a, {b.data(), ElementType::F32, -8, false}, d.data(), 8, launcher, workspace.get());
  });
  expect_error("aligned",
               [&] { kernels.gemm(plan, op_a, op_b, d.data(), 8, launcher, static_cast<char*>(workspace.get()) + 4); });
  expect_error("row stride", [&] { kernels.gemm(plan, op_a, op_b, d.data(), 7, launcher, workspace.get()); });
  expect_error("no output", [&] { kernels.gemm(plan, op_a, op_b, nullptr, 8, launcher, workspace.get()); });
  expect_error("no visit function", [&] {
    kernels.gemm_with_epilogue(plan, op_a, op_b, evg::EpilogueCallbacks{}, launcher, workspace.get());
  });
  evg::Launcher broken = launcher;
  broken.num_threads = 0;
  expect_error("at least one thread", [&] { kernels.gemm(plan, op_a, op_b, d.data(), 8, broken, workspace.get()); });
  // A plan fits one problem, one layout of B and one thread count.
  evg::Launcher one_thread = launcher;
  one_thread.num_threads = 1;
  expect_error("another problem or thread count",
               [&] { kernels.gemm(plan, op_a, op_b, d.data(), 8, one_thread, workspace.get()); });
  expect_error("another problem or thread count", [&] {
    kernels.gemm(plan, op_a, {b.data(), ElementType::F32, 8, true}, d.data(), 8, launcher, workspace.get());
  });
  if (best_isa() != Isa::SCALAR) {
    expect_error("another instruction set",
                 [&] { gemm_kernels(Isa::SCALAR).gemm(plan, op_a, op_b, d.data(), 8, launcher, workspace.get()); });
  }
}

}  // namespace
}  // namespace tg::cpu
