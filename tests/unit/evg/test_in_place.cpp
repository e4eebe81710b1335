// Blocks summed in the epilogue's output (block.h, accumulate_in_place): which output an epilogue
// offers the GEMM, and that visiting blocks whose accumulator lies in that output gives the bits
// of visiting a separate accumulator, under every policy (staged loads read the next sub-tile
// before the current one is stored).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "evg/evg_test_utils.h"
#include "tilegraph/evg/evg.h"

namespace tg::evg::test {
namespace {

using Acc = VisitorAccLoad;
using LoadF = VisitorAuxLoad<float>;
using StoreF = VisitorAuxStore<float>;
using Bias = VisitorRowBroadcast<float>;

// What an epilogue of type E built from args offers for the block at (2, 3).
template <class E>
float* offered(const typename E::Arguments& args, int64_t& ld, GemmShape problem = {6, 10, 1}) {
  E epilogue(args, problem, BlockGrid{4, 8}, 1);
  return epilogue.accumulate_in_place(2, 3, ld);
}

TEST(EvgInPlace, OffersAnF32OutputNoOtherNodeTouches) {
  // A 6 x 10 problem; C is 6 x 10 packed (60 floats), D has rows of 12.
  std::vector<float> memory(256);
  float* const base = memory.data();
  int64_t ld = 0;

  using AddC = BlockEpilogue<arch::Cpu<4>, 64, TreeVisitor<StoreF, TreeVisitor<VisitorCompute<fn::Plus>, Acc, LoadF>>>;
  EXPECT_EQ(offered<AddC>({{{}, {base}, {}}, {base + 60, {12}}}, ld), base + 60 + 2 * 12 + 3);
  EXPECT_EQ(ld, 12);
  // C is D (a residual added in place): summing there would overwrite C before it is read.
  EXPECT_EQ(offered<AddC>({{{}, {base + 60, {12}}, {}}, {base + 60, {12}}}, ld), nullptr);
  // C's last row overlaps D's first.
  EXPECT_EQ(offered<AddC>({{{}, {base}, {}}, {base + 55, {12}}}, ld), nullptr);
  // Nothing to sum in an empty output.
  EXPECT_EQ(offered<AddC>({{{}, {base}, {}}, {base + 60, {12}}}, ld, {0, 10, 1}), nullptr);

  using AddBias =
      BlockEpilogue<arch::Cpu<4>, 64, TreeVisitor<StoreF, TreeVisitor<VisitorCompute<fn::Plus>, Acc, Bias>>>;
  EXPECT_NE(offered<AddBias>({{{}, {base}, {}}, {base + 16}}, ld), nullptr);
  EXPECT_EQ(offered<AddBias>({{{}, {base + 70}, {}}, {base + 16}}, ld), nullptr);  // bias inside D
  // A one-row problem reads one row of D whatever its stride.
  EXPECT_EQ(offered<AddBias>({{{}, {base}, {}}, {base + 16}}, ld, {1, 10, 1}), base + 16 + 2 * 10 + 3);
  EXPECT_EQ(ld, 10);

  // Only an f32 output with contiguous rows can hold the accumulator.
  using Bf16Out =
      BlockEpilogue<arch::Cpu<4>, 64, TreeVisitor<VisitorAuxStore<bf16>, TreeVisitor<VisitorCast<bf16, float>, Acc>>>;
  std::vector<bf16> half(64);
  EXPECT_EQ(offered<Bf16Out>({{{}, {}}, {half.data()}}, ld), nullptr);
  using ColumnMajorOut = BlockEpilogue<arch::Cpu<4>, 64, TreeVisitor<VisitorAuxStore<float, layout::ColumnMajor>, Acc>>;
  EXPECT_EQ(offered<ColumnMajorOut>({{}, {base}}, ld), nullptr);
  using StridedOut = BlockEpilogue<arch::Cpu<4>, 64, TreeVisitor<VisitorAuxStore<float, layout::Strided>, Acc>>;
  EXPECT_EQ(offered<StridedOut>({{}, {base + 100, {-10, 1}}}, ld), nullptr);  // rows upside down

  // Two outputs: the first is offered, unless the other (or a reduction's results) overlaps it.
  using TwoOutputs =
      BlockEpilogue<arch::Cpu<4>, 64, TopologicalVisitor<std::tuple<Seq<>, Seq<0>, Seq<0>>, Acc, StoreF, StoreF>>;
  EXPECT_EQ(offered<TwoOutputs>({{}, {base}, {base + 60}}, ld), base + 2 * 10 + 3);
  EXPECT_EQ(offered<TwoOutputs>({{}, {base}, {base + 59}}, ld), nullptr);
  using OutputAndSums =
      BlockEpilogue<arch::Cpu<4>, 64,
                    TopologicalVisitor<std::tuple<Seq<>, Seq<0>, Seq<0>>, Acc, StoreF, VisitorRowReduce<reduce::Sum>>>;
  EXPECT_NE(offered<OutputAndSums>({{}, {base}, {base + 60}}, ld), nullptr);
  EXPECT_EQ(offered<OutputAndSums>({{}, {base}, {base + 50}}, ld), nullptr);
}

// t = acc + C; D = t; E = relu(t); r = row_sum(t), with the accumulator handed over in D.
using Dag = TopologicalVisitor<std::tuple<Seq<>, Seq<>, Seq<0, 1>, Seq<2>, Seq<2>, Seq<4>, Seq<2>>, Acc, LoadF,
                               VisitorCompute<fn::Plus>, StoreF, VisitorCompute<fn::ReLU>, StoreF,
                               VisitorRowReduce<reduce::Sum>>;

TEST(EvgInPlace, VisitingBlocksInTheOutputGivesTheBufferedBits) {
  for_each_policy<Dag>([&]<class E>(const char* policy) {
    for (const Shape& shape : test_shapes()) {
      const int64_t m = shape.m, n = shape.n;
      for (const BlockGrid& grid : test_grids()) {
        Rng rng(uint32_t(m * 977 + n * 31 + grid.block_rows * 7 + grid.block_cols));
        const std::vector<float> acc = random_vector(size_t(m * n), rng);
        const std::vector<float> c = random_vector(size_t(m * n), rng);
        const auto size = size_t(m * n);
        std::vector<float> d(size, kUntouched), e(size, kUntouched), r(size_t(n), kUntouched);
        run_epilogue<E>({{}, {c.data()}, {}, {d.data()}, {}, {e.data()}, {r.data()}}, acc, m, n, grid);

        std::vector<float> d_in_place = acc, e_in_place(size, kUntouched), r_in_place(size_t(n), kUntouched);
        const typename E::Arguments args{
            {}, {c.data()}, {}, {d_in_place.data()}, {}, {e_in_place.data()}, {r_in_place.data()}};
        E epilogue(args, GemmShape{m, n, 1}, grid, 1);
        int64_t ld = 0;
        if (m > 0 && n > 0) {
          ASSERT_EQ(epilogue.accumulate_in_place(0, 0, ld), d_in_place.data())
              << policy << " " << describe(shape, grid);
          ASSERT_EQ(ld, n);
        }
        for_each_block(d_in_place, m, n, grid, Schedule::kShuffled, 1, rng,
                       [&](const AccBlock& block, int thread) { epilogue.visit(block, thread); });
        epilogue.finish(Launcher::serial());

        const std::string where = std::string(policy) + " " + describe(shape, grid);
        EXPECT_EQ(compare_bits(d_in_place, d), "") << where;
        EXPECT_EQ(compare_bits(e_in_place, e), "") << where;
        EXPECT_EQ(compare_bits(r_in_place, r), "") << where;
      }
    }
  });
}

}  // namespace
}  // namespace tg::evg::test
