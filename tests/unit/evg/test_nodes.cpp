// Every node type in small graphs, against plain scalar references, on shapes with sizes 0, 1
// and primes, cut by grids that give partial edge blocks, under every architecture policy
// (which must all agree bit for bit on elementwise results).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "evg/evg_test_utils.h"
#include "tilegraph/evg/evg.h"

namespace tg::evg::test {
namespace {

template <class T>
using Load = VisitorAuxLoad<T>;
using Acc = VisitorAccLoad;
template <class Fn>
using Compute = VisitorCompute<Fn>;

uint32_t seed_of(const Shape& s, const BlockGrid& g) {
  return uint32_t(s.m * 1000003 + s.n * 7919 + g.block_rows * 31 + g.block_cols);
}

// An m x n output at ld (elements beyond n in each row must stay untouched), and its reference.
struct Output {
  int64_t m, n, ld;
  std::vector<float> data;
  std::vector<double> ref;
  Output(int64_t m_, int64_t n_, int64_t ld_)
      : m(m_), n(n_), ld(ld_), data(size_t(m_ * ld_), kUntouched), ref(size_t(m_ * ld_), kUntouched) {}
  double& at(int64_t r, int64_t c) { return ref[size_t(r * ld + c)]; }
  void reset() { std::fill(data.begin(), data.end(), kUntouched); }
};

TEST(EvgNodes, AccLoadToAuxStoreCopiesExactlyAndOnlyTheOutput) {
  using EVG = TreeVisitor<VisitorAuxStore<float>, Acc>;
  for (const Shape& s : test_shapes()) {
    for (const BlockGrid& g : test_grids()) {
      Rng rng(seed_of(s, g));
      const std::vector<float> acc = naive_accumulator(s.m, s.n, 5, rng);
      Output d(s.m, s.n, s.n + 3);
      for (int64_t r = 0; r < s.m; ++r) {
        for (int64_t c = 0; c < s.n; ++c) d.at(r, c) = acc[size_t(r * s.n + c)];
      }
      SameBitsAcrossPolicies same;
      for_each_policy<EVG>([&]<class E>(const char* policy) {
        d.reset();
        run_epilogue<E>({{}, {d.data.data(), {d.ld}}}, acc, s.m, s.n, g, Schedule::kShuffled, 3);
        EXPECT_EQ(compare(d.data, d.ref, 0, 0), "") << describe(s, g) << " " << policy;
        EXPECT_EQ(same.check(d.data), "") << describe(s, g) << " " << policy;
      });
    }
  }
}

// D = acc + C for C in three layouts, D row-major.
template <class Layout>
void check_aux_layout(const char* name, const auto& make_layout, const auto& c_offset, const auto& c_elements) {
  using EVG = TreeVisitor<VisitorAuxStore<float>, TreeVisitor<Compute<fn::Plus>, Acc, VisitorAuxLoad<float, Layout>>>;
  for (const Shape& s : test_shapes()) {
    for (const BlockGrid& g : test_grids()) {
      Rng rng(seed_of(s, g));
      const std::vector<float> acc = naive_accumulator(s.m, s.n, 3, rng);
      const std::vector<float> c = random_vector(c_elements(s.m, s.n), rng);
      Output d(s.m, s.n, s.n);
      for (int64_t r = 0; r < s.m; ++r) {
        for (int64_t col = 0; col < s.n; ++col) {
          d.at(r, col) = float(acc[size_t(r * s.n + col)] + c[size_t(c_offset(s.m, s.n, r, col))]);
        }
      }
      SameBitsAcrossPolicies same;
      for_each_policy<EVG>([&]<class E>(const char* policy) {
        d.reset();
        typename E::Arguments args{{{}, {c.data(), make_layout(s.m, s.n)}, {}}, {d.data.data()}};
        run_epilogue<E>(args, acc, s.m, s.n, g, Schedule::kThreads, 2);
        EXPECT_EQ(compare(d.data, d.ref, 0, 0), "") << name << " " << describe(s, g) << " " << policy;
        EXPECT_EQ(same.check(d.data), "") << name << " " << describe(s, g) << " " << policy;
      });
    }
  }
}

TEST(EvgNodes, AuxLoadReadsEveryLayout) {
  check_aux_layout<layout::RowMajor>(
      "row-major, padded rows", [](int64_t, int64_t n) { return layout::RowMajor{n + 5}; },
      [](int64_t, int64_t n, int64_t r, int64_t c) { return r * (n + 5) + c; },
      [](int64_t m, int64_t n) { return size_t(m * (n + 5)); });
  check_aux_layout<layout::ColumnMajor>(
      "column-major (transposed)", [](int64_t m, int64_t) { return layout::ColumnMajor{m + 2}; },
      [](int64_t m, int64_t, int64_t r, int64_t c) { return c * (m + 2) + r; },
      [](int64_t m, int64_t n) { return size_t((m + 2) * n); });
  check_aux_layout<layout::Strided>(
      "strided",
      [](int64_t, int64_t n) {
        return layout::Strided{3 * n + 1, 3};
      },
      [](int64_t, int64_t n, int64_t r, int64_t c) { return r * (3 * n + 1) + 3 * c; },
      [](int64_t m, int64_t n) { return size_t(m * (3 * n + 1) + 1); });
}

// D = acc + f32(C) for C stored as f16, bf16, i8, i32: per-edge types with explicit casts.
template <class T>
void check_narrow_aux(const char* name, const auto& encode, const auto& decode) {
  using EVG = TreeVisitor<VisitorAuxStore<float>,
                          TreeVisitor<Compute<fn::Plus>, Acc, TreeVisitor<VisitorCast<float, T>, Load<T>>>>;
  for (const Shape& s : test_shapes()) {
    const BlockGrid g{5, 7};
    Rng rng(seed_of(s, g));
    const std::vector<float> acc = naive_accumulator(s.m, s.n, 3, rng);
    const std::vector<float> values = random_vector(size_t(s.m * s.n), rng, -100.0f, 100.0f);
    std::vector<T> c(values.size());
    for (size_t i = 0; i < c.size(); ++i) c[i] = encode(values[i]);
    Output d(s.m, s.n, s.n);
    for (int64_t i = 0; i < s.m * s.n; ++i) d.ref[size_t(i)] = float(acc[size_t(i)] + decode(c[size_t(i)]));
    for_each_policy<EVG>([&]<class E>(const char* policy) {
      d.reset();
      typename E::Arguments args{{{}, {{c.data()}, {}}, {}}, {d.data.data()}};
      run_epilogue<E>(args, acc, s.m, s.n, g);
      EXPECT_EQ(compare(d.data, d.ref, 0, 0), "") << name << " " << describe(s, g) << " " << policy;
    });
  }
}

TEST(EvgNodes, NarrowAuxInputsGoThroughCasts) {
  check_narrow_aux<tg::f16>(
      "f16", [](float x) { return tg::f32_to_f16(x); }, [](tg::f16 h) { return tg::f16_to_f32(h); });
  check_narrow_aux<tg::bf16>(
      "bf16", [](float x) { return tg::f32_to_bf16(x); }, [](tg::bf16 h) { return tg::bf16_to_f32(h); });
  check_narrow_aux<int8_t>(
      "i8", [](float x) { return int8_t(x); }, [](int8_t v) { return float(v); });
  check_narrow_aux<int32_t>(
      "i32", [](float x) { return int32_t(x * 1000); }, [](int32_t v) { return float(v); });
}

// D = acc * alpha + (bias[col] * beta + scale[row]): scalar, row and col broadcasts, a
// row-extent and a tile-extent value computed from broadcasts only, strided vectors.
TEST(EvgNodes, BroadcastsOfEveryExtent) {
  using RowTerm = TreeVisitor<Compute<fn::Multiplies>, VisitorRowBroadcast<float>, VisitorScalarBroadcast<float>>;
  using Both = TreeVisitor<Compute<fn::Plus>, RowTerm, VisitorColBroadcast<float>>;
  using Scaled = TreeVisitor<Compute<fn::Multiplies>, Acc, VisitorScalarBroadcast<float>>;
  using EVG = TreeVisitor<VisitorAuxStore<float>, TreeVisitor<Compute<fn::Plus>, Scaled, Both>>;
  for (const Shape& s : test_shapes()) {
    for (const BlockGrid& g : test_grids()) {
      Rng rng(seed_of(s, g));
      const std::vector<float> acc = naive_accumulator(s.m, s.n, 4, rng);
      const std::vector<float> bias = random_vector(size_t(2 * s.n + 1), rng);   // stride 2
      const std::vector<float> scale = random_vector(size_t(3 * s.m + 1), rng);  // stride 3
      const float alpha = 0.75f, beta = -1.25f;
      Output d(s.m, s.n, s.n + 1);
      for (int64_t r = 0; r < s.m; ++r) {
        for (int64_t c = 0; c < s.n; ++c) {
          const float row_term = bias[size_t(2 * c)] * beta;
          const float both = row_term + scale[size_t(3 * r)];
          d.at(r, c) = acc[size_t(r * s.n + c)] * alpha + both;
        }
      }
      SameBitsAcrossPolicies same;
      for_each_policy<EVG>([&]<class E>(const char* policy) {
        d.reset();
        typename E::Arguments args{{{{}, {alpha}, {}}, {{{bias.data(), 2}, {beta}, {}}, {scale.data(), 3}, {}}, {}},
                                   {d.data.data(), {d.ld}}};
        run_epilogue<E>(args, acc, s.m, s.n, g, Schedule::kReversed, 2);
        EXPECT_EQ(compare(d.data, d.ref, 0, 0), "") << describe(s, g) << " " << policy;
        EXPECT_EQ(same.check(d.data), "") << describe(s, g) << " " << policy;
      });
    }
  }
}

// A -0 broadcast keeps its sign: acc / alpha and acc / scale[row] with -0 divisors and acc > 0
// are -inf in every lane, partial tiles included.
TEST(EvgNodes, NegativeZeroBroadcastsKeepTheirSign) {
  using OverScalar = TreeVisitor<Compute<fn::Divides>, Acc, VisitorScalarBroadcast<float>>;
  using OverColumn = TreeVisitor<Compute<fn::Divides>, Acc, VisitorColBroadcast<float>>;
  using EVG = TreeVisitor<VisitorAuxStore<float>, TreeVisitor<Compute<fn::Plus>, OverScalar, OverColumn>>;
  const Shape s{5, 19};
  const std::vector<float> acc(size_t(s.m * s.n), 1.0f);
  const std::vector<float> scale(size_t(s.m), -0.0f);
  const float alpha = -0.0f;
  for_each_policy<EVG>([&]<class E>(const char* policy) {
    Output d(s.m, s.n, s.n);
    typename E::Arguments args{{{{}, {alpha}, {}}, {{}, {scale.data()}, {}}, {}}, {d.data.data(), {d.ld}}};
    run_epilogue<E>(args, acc, s.m, s.n, BlockGrid{4, 16});
    for (float v : d.data) EXPECT_EQ(v, -std::numeric_limits<float>::infinity()) << policy;
  });
}

// Compute nodes with parameters and more than two inputs: clamp(fma(acc, C, bias[col]) * 2).
TEST(EvgNodes, ComputeNodesWithArgumentsAndThreeInputs) {
  using Fma = TreeVisitor<Compute<fn::MultiplyAdd>, Acc, Load<float>, VisitorRowBroadcast<float>>;
  using EVG =
      TreeVisitor<VisitorAuxStore<float>, TreeVisitor<Compute<fn::Clamp>, TreeVisitor<Compute<fn::Scale>, Fma>>>;
  for (const Shape& s : test_shapes()) {
    for (const BlockGrid& g : test_grids()) {
      Rng rng(seed_of(s, g));
      const std::vector<float> acc = naive_accumulator(s.m, s.n, 6, rng);
      const std::vector<float> c = random_vector(size_t(s.m * s.n), rng);
      const std::vector<float> bias = random_vector(size_t(s.n), rng);
      Output d(s.m, s.n, s.n);
      for (int64_t r = 0; r < s.m; ++r) {
        for (int64_t col = 0; col < s.n; ++col) {
          const size_t i = size_t(r * s.n + col);
          const double v = (double(acc[i]) * c[i] + bias[size_t(col)]) * 2.0;
          d.at(r, col) = std::fmin(std::fmax(v, -0.5), 0.75);
        }
      }
      SameBitsAcrossPolicies same;
      for_each_policy<EVG>([&]<class E>(const char* policy) {
        d.reset();
        typename E::Arguments args{{{{{}, {c.data()}, {bias.data()}, {}}, {2.0f}}, {-0.5f, 0.75f}}, {d.data.data()}};
        run_epilogue<E>(args, acc, s.m, s.n, g);
        EXPECT_EQ(compare(d.data, d.ref, 1e-6, 1e-6), "") << describe(s, g) << " " << policy;
        EXPECT_EQ(same.check(d.data), "") << describe(s, g) << " " << policy;
      });
    }
  }
}

// Every activation through a node (the functors themselves are checked in test_functional).
template <class Fn>
void check_activation(double (*reference)(double)) {
  using EVG = TreeVisitor<VisitorAuxStore<float>, TreeVisitor<Compute<Fn>, Acc>>;
  const Shape s{29, 41};
  const BlockGrid g{8, 16};
  Rng rng(17);
  std::vector<float> acc = naive_accumulator(s.m, s.n, 40, rng);
  Output d(s.m, s.n, s.n);
  for (size_t i = 0; i < acc.size(); ++i) d.ref[i] = float(reference(acc[i]));
  for_each_policy<EVG>([&]<class E>(const char* policy) {
    d.reset();
    run_epilogue<E>({{{}, {}}, {d.data.data()}}, acc, s.m, s.n, g);
    EXPECT_EQ(compare(d.data, d.ref, 1e-5, 1e-7), "") << Fn::kName << " " << policy;
  });
}

TEST(EvgNodes, ActivationNodes) {
  check_activation<fn::ReLU>([](double x) { return x > 0 ? x : 0.0; });
  check_activation<fn::GELU>(
      [](double x) { return x / (1 + std::exp(-2 * 0.7978845608028654 * (x + 0.044715 * x * x * x))); });
  check_activation<fn::GELUErf>([](double x) { return 0.5 * x * std::erfc(-x / std::sqrt(2.0)); });
  check_activation<fn::SiLU>([](double x) { return x / (1 + std::exp(-x)); });
  check_activation<fn::Sigmoid>([](double x) { return 1 / (1 + std::exp(-x)); });
  check_activation<fn::Tanh>([](double x) { return std::tanh(x); });
  check_activation<fn::Exp>([](double x) { return std::exp(x); });
  check_activation<fn::Negate>([](double x) { return -x; });
  check_activation<fn::Absolute>([](double x) { return std::fabs(x); });
}

// Casts on the way out: D in f16 / bf16 / i8 / i32 with a rounding mode, bit-exact against the
// conversion itself (checked against scalar models in test_convert).
template <class T, RoundMode Mode>
void check_cast_output(const char* name, float scale) {
  using EVG =
      TreeVisitor<VisitorAuxStore<T>, TreeVisitor<VisitorCast<T, float, Mode>, TreeVisitor<Compute<fn::Scale>, Acc>>>;
  for (const Shape& s : test_shapes()) {
    const BlockGrid g{7, 13};
    Rng rng(seed_of(s, g));
    const std::vector<float> acc = naive_accumulator(s.m, s.n, 8, rng);
    std::vector<T> expected(acc.size());
    for (size_t i = 0; i < acc.size(); ++i) {
      const auto lanes = numeric::convert_lanes<T, float, Mode, 1>(simd::splat<1>(acc[i] * scale));
      std::memcpy(&expected[i], &lanes, sizeof(T));
    }
    for_each_policy<EVG>([&]<class E>(const char* policy) {
      std::vector<T> d(acc.size());
      run_epilogue<E>({{{{}, {scale}}, {}}, {d.data()}}, acc, s.m, s.n, g);
      EXPECT_TRUE(d.empty() || std::memcmp(d.data(), expected.data(), d.size() * sizeof(T)) == 0)
          << name << " " << round_mode_name(Mode) << " " << describe(s, g) << " " << policy;
    });
  }
}

TEST(EvgNodes, CastOutputsInEveryType) {
  check_cast_output<tg::f16, RoundMode::kNearestEven>("f16", 1000.0f);
  check_cast_output<tg::f16, RoundMode::kTowardZero>("f16", 1e5f);
  check_cast_output<tg::bf16, RoundMode::kTowardPosInf>("bf16", 1.0f);
  check_cast_output<int8_t, RoundMode::kNearestAway>("i8", 50.0f);
  check_cast_output<int32_t, RoundMode::kToOdd>("i32", 1e4f);
  check_cast_output<int32_t, RoundMode::kTowardNegInf>("i32", 3.0f);
}

// D written column-major with padded columns, and strided with gaps (f16 outputs: CastOutputsInEveryType).
TEST(EvgNodes, AuxStoreWritesEveryLayout) {
  using ColumnMajorStore = TreeVisitor<VisitorAuxStore<float, layout::ColumnMajor>, Acc>;
  using StridedStore = TreeVisitor<VisitorAuxStore<float, layout::Strided>, Acc>;
  for (const Shape& s : test_shapes()) {
    for (const BlockGrid& g : test_grids()) {
      Rng rng(seed_of(s, g));
      const std::vector<float> acc = naive_accumulator(s.m, s.n, 2, rng);
      const int64_t col_ld = s.m + 3;
      std::vector<double> ref_cm(size_t(col_ld * s.n), kUntouched);
      const int64_t rs = 2, cs = 2 * s.m + 1;  // interleaved with gaps
      std::vector<double> ref_st(size_t(s.n * cs + 2), kUntouched);
      for (int64_t r = 0; r < s.m; ++r) {
        for (int64_t c = 0; c < s.n; ++c) {
          ref_cm[size_t(c * col_ld + r)] = acc[size_t(r * s.n + c)];
          ref_st[size_t(r * rs + c * cs)] = acc[size_t(r * s.n + c)];
        }
      }
      for_each_policy<ColumnMajorStore>([&]<class E>(const char* policy) {
        std::vector<float> d(ref_cm.size(), kUntouched);
        run_epilogue<E>({{}, {d.data(), {col_ld}}}, acc, s.m, s.n, g, Schedule::kShuffled, 2);
        EXPECT_EQ(compare(d, ref_cm, 0, 0), "") << "column-major " << describe(s, g) << " " << policy;
      });
      for_each_policy<StridedStore>([&]<class E>(const char* policy) {
        std::vector<float> d(ref_st.size(), kUntouched);
        run_epilogue<E>({{}, {d.data(), {rs, cs}}}, acc, s.m, s.n, g, Schedule::kShuffled, 2);
        EXPECT_EQ(compare(d, ref_st, 0, 0), "") << "strided " << describe(s, g) << " " << policy;
      });
    }
  }
}

}  // namespace
}  // namespace tg::evg::test
