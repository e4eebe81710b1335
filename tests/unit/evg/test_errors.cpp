// Bad arguments and bad blocks give a tg::Error naming the node and the problem, never a crash.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "evg/evg_test_utils.h"
#include "tilegraph/core/error.h"
#include "tilegraph/evg/evg.h"

namespace tg::evg::test {
namespace {

using Acc = VisitorAccLoad;

template <class E>
std::string construction_error(const typename E::Arguments& args, GemmShape problem = {4, 5, 1},
                               BlockGrid grid = {2, 2}, int threads = 1) {
  try {
    E epilogue(args, problem, grid, threads);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(EvgErrors, BadArgumentsNameTheNode) {
  using AddStore = BlockEpilogue<
      arch::Cpu<4>, 64,
      TreeVisitor<VisitorAuxStore<float>, TreeVisitor<VisitorCompute<fn::Plus>, Acc, VisitorAuxLoad<float>>>>;
  float buffer[64] = {};
  EXPECT_EQ(construction_error<AddStore>({{{}, {nullptr}, {}}, {buffer}}), "evg node 1 (VisitorAuxLoad): null pointer");
  EXPECT_EQ(construction_error<AddStore>({{{}, {buffer}, {}}, {nullptr}}),
            "evg node 3 (VisitorAuxStore): null pointer");
  EXPECT_EQ(construction_error<AddStore>({{{}, {buffer, {3}}, {}}, {buffer}}),
            "evg node 1 (VisitorAuxLoad): row-major ld=3 < n=5");
  EXPECT_EQ(construction_error<AddStore>({{{}, {buffer, {-1}}, {}}, {buffer}}),
            "evg node 1 (VisitorAuxLoad): row-major ld=-1 < n=5");
  // An empty problem needs no pointers.
  EXPECT_EQ(construction_error<AddStore>({{{}, {nullptr}, {}}, {nullptr}}, {0, 5, 1}), "");

  using ColumnMajorLoad =
      BlockEpilogue<arch::Cpu<4>, 64, TreeVisitor<VisitorAuxStore<float>, VisitorAuxLoad<float, layout::ColumnMajor>>>;
  EXPECT_EQ(construction_error<ColumnMajorLoad>({{buffer, {2}}, {buffer}}),
            "evg node 0 (VisitorAuxLoad): column-major ld=2 < m=4");

  using StridedStore = BlockEpilogue<arch::Cpu<4>, 64, TreeVisitor<VisitorAuxStore<float, layout::Strided>, Acc>>;
  EXPECT_EQ(construction_error<StridedStore>({{}, {buffer, {1, 1}}}),
            "evg node 1 (VisitorAuxStore): strides (1, 1) make elements of the 4x5 output overlap");
  EXPECT_EQ(construction_error<StridedStore>({{}, {buffer, {0, 1}}}),
            "evg node 1 (VisitorAuxStore): strides (0, 1) make elements of the 4x5 output overlap");
  EXPECT_EQ(construction_error<StridedStore>({{}, {buffer, {1, 4}}}), "");   // column-major via strides
  EXPECT_EQ(construction_error<StridedStore>({{}, {buffer, {-5, 1}}}), "");  // rows upside down

  using Reduce = BlockEpilogue<arch::Cpu<4>, 64,
                               TopologicalVisitor<std::tuple<Seq<>, Seq<0>, Seq<0>>, Acc, VisitorRowReduce<reduce::Sum>,
                                                  VisitorColReduce<reduce::Sum>>>;
  EXPECT_EQ(construction_error<Reduce>({{}, {nullptr}, {buffer}}), "evg node 1 (VisitorRowReduce): null pointer");
  EXPECT_EQ(construction_error<Reduce>({{}, {buffer}, {buffer, 0}}),
            "evg node 2 (VisitorColReduce): stride 0 would store every row's result in one place");

  using Broadcast = BlockEpilogue<
      arch::Cpu<4>, 64,
      TreeVisitor<VisitorAuxStore<float>, TreeVisitor<VisitorCompute<fn::Plus>, Acc, VisitorRowBroadcast<float>>>>;
  EXPECT_EQ(construction_error<Broadcast>({{{}, {nullptr}, {}}, {buffer}}),
            "evg node 1 (VisitorRowBroadcast): null pointer");
}

TEST(EvgErrors, BadProblemGridAndThreads) {
  using E = BlockEpilogue<arch::Cpu<4>, 64, TreeVisitor<VisitorAuxStore<float>, Acc>>;
  float buffer[64] = {};
  EXPECT_EQ(construction_error<E>({{}, {buffer}}, {4, 5, 1}, {0, 2}),
            "evg: block grid 0x2 must have positive block sizes");
  EXPECT_EQ(construction_error<E>({{}, {buffer}}, {-1, 5, 1}), "evg: negative problem size -1x5x1");
  EXPECT_EQ(construction_error<E>({{}, {buffer}}, {4, 5, 1}, {2, 2}, 0), "evg: num_threads=0 must be at least 1");
}

TEST(EvgErrors, BlocksThatAreNotOfTheGrid) {
  using E = BlockEpilogue<arch::Cpu<4>, 64, TreeVisitor<VisitorAuxStore<float>, Acc>>;
  std::vector<float> d(20), acc(20);
  E epilogue({{}, {d.data()}}, GemmShape{4, 5, 1}, BlockGrid{2, 3}, 2);
  const auto error = [&](AccBlock block, int thread) -> std::string {
    try {
      epilogue.visit(block, thread);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(error({acc.data(), 5, 0, 0, 2, 3}, 0), "");
  EXPECT_EQ(error({acc.data(), 5, 2, 3, 2, 2}, 1), "");      // the partial corner block
  EXPECT_EQ(error({acc.data() + 5, 5, 1, 0, 1, 3}, 0), "");  // a row strip of a block
  EXPECT_EQ(error({acc.data(), 5, 0, 0, 2, 3}, 2), "evg: visit from thread 2 of an epilogue built for 2");
  EXPECT_EQ(
      error({acc.data(), 5, 1, 0, 2, 3}, 0),
      "evg: accumulator block at (1, 0) of 2x3 (ld 5) is not a block, or a row strip of one, of the 2x3 grid over 4x5");
  EXPECT_EQ(
      error({acc.data(), 5, 2, 3, 2, 3}, 0),
      "evg: accumulator block at (2, 3) of 2x3 (ld 5) is not a block, or a row strip of one, of the 2x3 grid over 4x5");
  EXPECT_EQ(
      error({acc.data(), 2, 0, 0, 2, 3}, 0),
      "evg: accumulator block at (0, 0) of 2x3 (ld 2) is not a block, or a row strip of one, of the 2x3 grid over 4x5");
  EXPECT_EQ(
      error({nullptr, 5, 0, 0, 2, 3}, 0),
      "evg: accumulator block at (0, 0) of 2x3 (ld 5) is not a block, or a row strip of one, of the 2x3 grid over 4x5");
  EXPECT_EQ(
      error({acc.data(), 5, 4, 0, 0, 3}, 0),
      "evg: accumulator block at (4, 0) of 0x3 (ld 5) is not a block, or a row strip of one, of the 2x3 grid over 4x5");
}

}  // namespace
}  // namespace tg::evg::test
