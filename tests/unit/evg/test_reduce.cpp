// Row and column reductions (sum, max, min) as extra outputs: against references, on broadcast
// inputs, with NaN, and deterministic — bit-identical across 1..4 threads, every block order and
// every lane count; within the f32 bound of the reference across block grids.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "evg/evg_test_utils.h"
#include "tilegraph/evg/evg.h"

namespace tg::evg::test {
namespace {

using Acc = VisitorAccLoad;
using LoadF = VisitorAuxLoad<float>;

// D = acc + C stored, with the column reduction (one value per column) and the row reduction
// (one per row) of D as extra outputs.
template <class Fn>
using Reductions =
    TopologicalVisitor<std::tuple<Seq<>, Seq<>, Seq<0, 1>, Seq<2>, Seq<3>, Seq<4>>, Acc, LoadF,
                       VisitorCompute<fn::Plus>, VisitorAuxStore<float>, VisitorRowReduce<Fn>, VisitorColReduce<Fn>>;

struct Outputs {
  std::vector<float> d, per_column, per_row;
};

template <class E>
Outputs run(const std::vector<float>& acc, const std::vector<float>& c, int64_t m, int64_t n, const BlockGrid& g,
            Schedule schedule, int threads, uint32_t seed) {
  Outputs o{std::vector<float>(acc.size()), std::vector<float>(size_t(n)), std::vector<float>(size_t(m))};
  run_epilogue<E>({{}, {c.data()}, {}, {o.d.data()}, {o.per_column.data()}, {o.per_row.data()}}, acc, m, n, g, schedule,
                  threads, seed);
  return o;
}

template <class Fn>
void check_against_reference(double init, double (*combine)(double, double), double tol) {
  for (const Shape& s : test_shapes()) {
    for (const BlockGrid& g : test_grids()) {
      Rng rng(uint32_t(s.m * 131 + s.n * 7 + g.block_rows));
      const std::vector<float> acc = naive_accumulator(s.m, s.n, 3, rng);
      const std::vector<float> c = random_vector(acc.size(), rng);
      std::vector<double> ref_col(size_t(s.n), init), ref_row(size_t(s.m), init);
      for (int64_t r = 0; r < s.m; ++r) {
        for (int64_t col = 0; col < s.n; ++col) {
          const double v = acc[size_t(r * s.n + col)] + c[size_t(r * s.n + col)];
          ref_col[size_t(col)] = combine(ref_col[size_t(col)], v);
          ref_row[size_t(r)] = combine(ref_row[size_t(r)], v);
        }
      }
      for_each_policy<Reductions<Fn>>([&]<class E>(const char* policy) {
        const Outputs o = run<E>(acc, c, s.m, s.n, g, Schedule::kShuffled, 2, 5);
        EXPECT_EQ(compare(o.per_column, ref_col, tol, tol), "") << Fn::kName << " " << describe(s, g) << " " << policy;
        EXPECT_EQ(compare(o.per_row, ref_row, tol, tol), "") << Fn::kName << " " << describe(s, g) << " " << policy;
      });
    }
  }
}

TEST(EvgReduce, SumMaxMinMatchTheReference) {
  check_against_reference<reduce::Sum>(
      0.0, [](double a, double b) { return a + b; }, 1e-5);
  check_against_reference<reduce::Max>(
      -INFINITY, [](double a, double b) { return std::max(a, b); }, 0);
  check_against_reference<reduce::Min>(
      INFINITY, [](double a, double b) { return std::min(a, b); }, 0);
}

TEST(EvgReduce, BitIdenticalAcrossThreadsSchedulesAndLanes) {
  const Shape s{61, 129};
  for (const BlockGrid& g : {BlockGrid{8, 16}, BlockGrid{7, 13}, BlockGrid{1, 129}, BlockGrid{61, 1}}) {
    Rng rng(21);
    const std::vector<float> acc = naive_accumulator(s.m, s.n, 16, rng);
    const std::vector<float> c = random_vector(acc.size(), rng);
    using Sum = Reductions<reduce::Sum>;
    const Outputs first = run<BlockEpilogue<arch::Cpu<4>, 64, Sum>>(acc, c, s.m, s.n, g, Schedule::kSerial, 1, 1);
    const auto same = [&](const Outputs& o, const std::string& what) {
      EXPECT_EQ(compare_bits(o.per_column, first.per_column), "") << what << " " << describe(s, g);
      EXPECT_EQ(compare_bits(o.per_row, first.per_row), "") << what << " " << describe(s, g);
      EXPECT_EQ(compare_bits(o.d, first.d), "") << what << " " << describe(s, g);
    };
    for (int threads = 1; threads <= 4; ++threads) {
      for (Schedule schedule : {Schedule::kSerial, Schedule::kReversed, Schedule::kShuffled, Schedule::kThreads}) {
        for (uint32_t seed = 0; seed < 3; ++seed) {
          same(run<BlockEpilogue<arch::Cpu<4>, 64, Sum>>(acc, c, s.m, s.n, g, schedule, threads, seed),
               std::to_string(threads) + " threads, schedule " + std::to_string(int(schedule)));
        }
      }
    }
    // The lane count and the compute schedule do not change any partial sum either.
    same(run<BlockEpilogue<arch::Cpu<1>, 64, Sum>>(acc, c, s.m, s.n, g, Schedule::kThreads, 3, 0), "W=1");
    same(run<BlockEpilogue<arch::Cpu<16>, 64, Sum>>(acc, c, s.m, s.n, g, Schedule::kThreads, 4, 0), "W=16");
    same(run<BlockEpilogue<arch::CpuStaged<8>, 64, Sum>>(acc, c, s.m, s.n, g, Schedule::kThreads, 2, 0), "staged W=8");
  }
}

TEST(EvgReduce, BroadcastInputsAndNaN) {
  // Column sums of bias[col] over m rows, row maxima of scale[row] over n columns.
  using EVG =
      TopologicalVisitor<std::tuple<Seq<>, Seq<0>, Seq<>, Seq<2>>, VisitorRowBroadcast<float>,
                         VisitorRowReduce<reduce::Sum>, VisitorColBroadcast<float>, VisitorColReduce<reduce::Max>>;
  const Shape s{37, 19};
  Rng rng(2);
  const std::vector<float> acc(size_t(s.m * s.n), 0.0f);
  std::vector<float> bias = random_vector(size_t(s.n), rng), scale = random_vector(size_t(s.m), rng);
  std::vector<double> ref_sum(size_t(s.n)), ref_max(size_t(s.m));
  for (int64_t c = 0; c < s.n; ++c) {
    double sum = 0;
    for (int64_t r = 0; r < s.m; ++r) sum += bias[size_t(c)];
    ref_sum[size_t(c)] = sum;
  }
  for (int64_t r = 0; r < s.m; ++r) ref_max[size_t(r)] = scale[size_t(r)];
  scale[5] = std::numeric_limits<float>::quiet_NaN();
  ref_max[5] = std::numeric_limits<double>::quiet_NaN();
  for_each_policy<EVG>([&]<class E>(const char* policy) {
    std::vector<float> sums(size_t(s.n)), maxima(size_t(s.m));
    run_epilogue<E>({{bias.data()}, {sums.data()}, {scale.data()}, {maxima.data()}}, acc, s.m, s.n, BlockGrid{5, 6});
    EXPECT_EQ(compare(sums, ref_sum, 1e-5, 1e-6), "") << policy;
    EXPECT_EQ(compare(maxima, ref_max, 0, 0), "") << policy;
  });
}

TEST(EvgReduce, NegativeZerosStayNegative) {
  // -0 + -0 is -0, and so are max and min of -0s: a result of +0 means some lane started from a
  // +0 (an identity or a padding lane broadcast as 0 + x).
  const Shape s{7, 37};
  const std::vector<float> zeros(size_t(s.m * s.n), -0.0f);
  const auto all_negative_zeros = [](const std::vector<float>& v) {
    for (float x : v) {
      if (x != 0.0f || !std::signbit(x)) return false;
    }
    return true;
  };
  const auto check = [&]<class Fn>(Fn) {
    for_each_policy<Reductions<Fn>>([&]<class E>(const char* policy) {
      const Outputs o = run<E>(zeros, zeros, s.m, s.n, BlockGrid{4, 16}, Schedule::kShuffled, 2, 3);
      EXPECT_TRUE(all_negative_zeros(o.d)) << Fn::kName << " " << policy;
      EXPECT_TRUE(all_negative_zeros(o.per_column)) << Fn::kName << " " << policy;
      EXPECT_TRUE(all_negative_zeros(o.per_row)) << Fn::kName << " " << policy;
    });
  };
  check(reduce::Sum{});
  check(reduce::Max{});
  check(reduce::Min{});
}

TEST(EvgReduce, EmptyReductionsGiveTheIdentity) {
  using EVG = TopologicalVisitor<std::tuple<Seq<>, Seq<0>, Seq<0>>, Acc, VisitorRowReduce<reduce::Max>,
                                 VisitorColReduce<reduce::Sum>>;
  using E = BlockEpilogue<arch::Cpu<4>, 64, EVG>;
  std::vector<float> per_column(3, 1.0f), per_row(4, 1.0f);
  const std::vector<float> none;
  run_epilogue<E>({{}, {per_column.data()}, {per_row.data()}}, none, 0, 3, BlockGrid{4, 4});
  for (float v : per_column) EXPECT_EQ(v, -std::numeric_limits<float>::infinity());
  run_epilogue<E>({{}, {per_column.data()}, {per_row.data()}}, none, 4, 0, BlockGrid{4, 4});
  for (float v : per_row) EXPECT_EQ(v, 0.0f);
}

}  // namespace
}  // namespace tg::evg::test
