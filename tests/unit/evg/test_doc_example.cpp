#include <gtest/gtest.h>

#include <cmath>

#include "evg/evg_test_utils.h"
#include "tilegraph/evg/evg.h"

namespace tg::evg::test {
namespace {

using GeluBias = TreeVisitor<
    VisitorAuxStore<float>,
    TreeVisitor<VisitorCompute<fn::GELU>,
                TreeVisitor<VisitorCompute<fn::Plus>,
                            TreeVisitor<VisitorCompute<fn::Multiplies>, VisitorAccLoad, VisitorScalarBroadcast<float>>,
                            VisitorRowBroadcast<float>>>>;

// The example of docs/evg.md and epilogue/block_epilogue.h, as written there.
TEST(EvgDocExample, GeluBias) {
  Rng rng(3);
  const int64_t m = 37, n = 53;
  const std::vector<float> acc = naive_accumulator(m, n, 9, rng);
  const std::vector<float> bias = random_vector(size_t(n), rng);
  std::vector<float> d(size_t(m * n), -7.0f);
  using E = BlockEpilogue<arch::Cpu<4>, 64, GeluBias>;
  E::Arguments args{{{{{}, {1.5f}, {}}, {bias.data()}, {}}, {}}, {d.data()}};
  run_epilogue<E>(args, acc, m, n, BlockGrid{8, 16});
  std::vector<double> ref(d.size());
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      const double x = double(acc[size_t(i * n + j)]) * 1.5 + bias[size_t(j)];
      ref[size_t(i * n + j)] = 0.5 * x * (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
    }
  }
  EXPECT_EQ(compare(d, ref, 1e-5, 1e-6), "");
}

}  // namespace
}  // namespace tg::evg::test
