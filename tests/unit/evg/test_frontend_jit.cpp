// String epilogue -> DAG -> C++ -> JIT -> run, against plain references. Each test compiles its
// kernels into a private cache (a cold compile costs ~1-2 s), so there are few distinct ones.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "evg/evg_test_utils.h"
#include "tilegraph/core/dtype.h"
#include "tilegraph/evg/frontend/compiled_epilogue.h"

namespace tg::evg::test {
namespace {

using frontend::Binding;
using frontend::CompiledEpilogue;
using frontend::CompileOptions;
using frontend::ElementType;
using frontend::OperandKind;
using frontend::Signature;

CompileOptions options(int lanes = 0, bool fuse = true, int length = 2048) {
  CompileOptions o;
  o.lanes = lanes;
  o.fuse_compute = fuse;
  o.compute_length = length;
  o.compiler = &test_compiler();
  return o;
}

std::vector<AccBlock> blocks_of(const std::vector<float>& acc, int64_t m, int64_t n, const BlockGrid& g) {
  std::vector<AccBlock> blocks;
  for (int64_t r = 0; r < m; r += g.block_rows) {
    for (int64_t c = 0; c < n; c += g.block_cols) {
      blocks.push_back({acc.data() + r * n + c, n, r, c, std::min(g.block_rows, m - r), std::min(g.block_cols, n - c)});
    }
  }
  return blocks;
}

double gelu(double x) { return x / (1 + std::exp(-2 * 0.7978845608028654 * (x + 0.044715 * x * x * x))); }

TEST(EvgFrontEndJit, GeluBiasOnEveryShapeAndThreadCount) {
  Signature sig;
  sig.input("alpha", OperandKind::kScalar).input("bias", OperandKind::kRowVector).output("D");
  const CompiledEpilogue epilogue("D = gelu(acc * alpha + bias[col])", sig, options());
  EXPECT_EQ(epilogue.lanes(), __builtin_cpu_supports("avx512f") ? 16 : __builtin_cpu_supports("avx2") ? 8 : 4);
  for (const Shape& s : test_shapes()) {
    for (const BlockGrid& g : {BlockGrid{8, 16}, BlockGrid{7, 13}, BlockGrid{64, 256}}) {
      Rng rng(uint32_t(s.m * 7 + s.n));
      const std::vector<float> acc = naive_accumulator(s.m, s.n, 24, rng);
      const std::vector<float> bias = random_vector(size_t(s.n), rng);
      std::vector<double> ref(acc.size());
      for (int64_t r = 0; r < s.m; ++r) {
        for (int64_t c = 0; c < s.n; ++c)
          ref[size_t(r * s.n + c)] = gelu(double(acc[size_t(r * s.n + c)]) * 0.5 + bias[size_t(c)]);
      }
      for (int threads = 1; threads <= 3; ++threads) {
        std::vector<float> d(acc.size(), kUntouched);
        const std::vector<AccBlock> blocks = blocks_of(acc, s.m, s.n, g);
        epilogue.run({s.m, s.n, 24}, g, blocks,
                     {{"alpha", Binding::value(0.5f)},
                      {"bias", Binding::vector(bias.data())},
                      {"D", Binding::matrix(d.data(), s.n)}},
                     thread_launcher(threads));
        EXPECT_EQ(compare(d, ref, 1e-5, 1e-6), "") << describe(s, g) << " threads " << threads;
      }
    }
  }
}

// Several statements and outputs: a shared value, a transposed f16 input, a column vector, an
// f16 output rounded toward zero into padded rows, reductions both ways.
TEST(EvgFrontEndJit, MultipleOutputsCastsLayoutsAndReductions) {
  Signature sig;
  sig.input("C", OperandKind::kMatrix, ElementType::kF16)
      .input("scale", OperandKind::kColVector)
      .output("D")
      .output("E", OperandKind::kMatrix, ElementType::kF16)
      .output("r", OperandKind::kRowVector)
      .output("s", OperandKind::kColVector);
  const std::string source =
      "t = acc * scale[row] + C   # C is f16: widened exactly\n"
      "D = t\n"
      "E = f16(relu(t) * 3, rz)\n"
      "r = row_sum(t)\n"
      "s = col_max(E)\n";
  for (const auto& [lanes, fuse, length] : {std::tuple{0, true, 2048}, std::tuple{1, false, 32}}) {
    const CompiledEpilogue epilogue(source, sig, options(lanes, fuse, length));
    const int64_t m = 29, n = 67;
    const BlockGrid g{6, 20};
    Rng rng(8);
    const std::vector<float> acc = naive_accumulator(m, n, 8, rng);
    const std::vector<float> scale = random_vector(size_t(m), rng);
    const std::vector<float> c_values = random_vector(size_t(m * n), rng);
    std::vector<tg::f16> c_cm(size_t(m * n));  // column-major, ld = m
    std::vector<double> ref_d(size_t(m * n)), ref_r(size_t(n), 0.0), ref_s(size_t(m), -INFINITY);
    std::vector<uint16_t> ref_e(size_t(m * (n + 3)), 0xabcd);
    for (int64_t r = 0; r < m; ++r) {
      for (int64_t col = 0; col < n; ++col) {
        const tg::f16 h = tg::f32_to_f16(c_values[size_t(r * n + col)]);
        c_cm[size_t(col * m + r)] = h;
        const double t = double(acc[size_t(r * n + col)]) * scale[size_t(r)] + tg::f16_to_f32(h);
        ref_d[size_t(r * n + col)] = t;
        ref_r[size_t(col)] += t;
        // relu(t) * 3 rounded toward zero to f16: truncate the f32 value's extra bits.
        const float e32 = float(t > 0 ? t : 0.0) * 3.0f;
        uint16_t e16 = tg::f32_to_f16(e32).bits;
        if (tg::f16_to_f32(tg::f16{e16}) > e32) e16 = uint16_t(e16 - 1);
        ref_e[size_t(r * (n + 3) + col)] = e16;
        ref_s[size_t(r)] = std::max(ref_s[size_t(r)], double(tg::f16_to_f32(tg::f16{e16})));
      }
    }
    std::vector<float> d(static_cast<size_t>(m * n)), rsum(static_cast<size_t>(n)), smax(static_cast<size_t>(m));
    std::vector<uint16_t> e(ref_e.size(), 0xabcd);
    epilogue.run({m, n, 8}, g, blocks_of(acc, m, n, g),
                 {{"C", Binding::column_major(c_cm.data(), 0)},  // 0: packed, ld = m
                  {"scale", Binding::vector(scale.data())},
                  {"D", Binding::matrix(d.data(), n)},
                  {"E", Binding::matrix(e.data(), n + 3)},
                  {"r", Binding::vector(rsum.data())},
                  {"s", Binding::vector(smax.data())}},
                 thread_launcher(2));
    const std::string config = "lanes " + std::to_string(epilogue.lanes()) + (fuse ? " fused" : " staged");
    EXPECT_EQ(compare(d, ref_d, 1e-6, 1e-6), "") << config;
    EXPECT_EQ(compare(rsum, ref_r, 1e-5, 1e-5), "") << config;
    EXPECT_EQ(compare(smax, ref_s, 2e-3, 0), "") << config;  // maxima of E: one f16 step
    // E: within one f16 step of the model (FMA contraction may move t by an ulp), padding untouched.
    int far = 0;
    for (size_t i = 0; i < e.size(); ++i) {
      if (ref_e[i] == 0xabcd ? e[i] != 0xabcd : std::abs(int(e[i]) - int(ref_e[i])) > 1) ++far;
    }
    EXPECT_EQ(far, 0) << config;
  }
}

TEST(EvgFrontEndJit, SharedSubexpressionAndTheKernelCache) {
  Signature sig;
  sig.input("C").input("X").output("D");
  const uint64_t compiles_before = test_compiler().stats().compiles;
  const CompiledEpilogue first("D = (C + X) + (C + X)", sig, options(4));
  const CompiledEpilogue again("D = (C + X) + (C + X)", sig, options(4));
  EXPECT_EQ(again.kernel_id(), first.kernel_id());
  EXPECT_EQ(test_compiler().stats().compiles, compiles_before + 1);
  const int64_t m = 17, n = 23;
  Rng rng(1);
  const std::vector<float> acc(size_t(m * n));
  const std::vector<float> c = random_vector(acc.size(), rng), x = random_vector(acc.size(), rng);
  std::vector<float> d(acc.size());
  const BlockGrid g{5, 5};
  first.run(
      {m, n, 1}, g, blocks_of(acc, m, n, g),
      {{"C", Binding::matrix(c.data(), n)}, {"X", Binding::matrix(x.data(), 0)}, {"D", Binding::matrix(d.data(), 0)}});
  std::vector<double> ref(acc.size());
  for (size_t i = 0; i < ref.size(); ++i) ref[i] = (c[i] + x[i]) + (c[i] + x[i]);
  EXPECT_EQ(compare(d, ref, 0, 0), "") << "X and D bound packed (ld 0 = n)";
}

TEST(EvgFrontEndJit, RunErrors) {
  Signature sig;
  sig.input("C").output("D");
  const CompiledEpilogue epilogue("D = acc + C", sig, options(4));
  const int64_t m = 4, n = 5;
  const std::vector<float> acc(size_t(m * n));
  std::vector<float> c(acc.size()), d(acc.size());
  const BlockGrid g{2, 2};
  const std::vector<AccBlock> blocks = blocks_of(acc, m, n, g);
  const auto error_of = [&](const std::map<std::string, Binding, std::less<>>& bindings,
                            std::vector<AccBlock> which) -> std::string {
    try {
      epilogue.run({m, n, 1}, g, which, bindings);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  const Binding cb = Binding::matrix(c.data(), n), db = Binding::matrix(d.data(), n);
  EXPECT_EQ(error_of({{"C", cb}, {"D", db}}, blocks), "");
  EXPECT_EQ(error_of({{"D", db}}, blocks), "evg: no binding for matrix 'C'");
  EXPECT_EQ(error_of({{"C", cb}, {"D", db}, {"Q", db}}, blocks),
            "evg: binding for 'Q', which the epilogue does not declare");
  // Reported by the node inside the kernel, through the params' error buffer.
  EXPECT_EQ(error_of({{"C", Binding::matrix(nullptr, n)}, {"D", db}}, blocks),
            "evg node 1 (VisitorAuxLoad): null pointer");
  EXPECT_EQ(error_of({{"C", cb}, {"D", Binding::strided(d.data(), 1, 1)}}, blocks),
            "evg node 3 (VisitorAuxStore): strides (1, 1) make elements of the 4x5 output overlap");
  std::vector<AccBlock> bad = blocks;
  bad[1].col0 = 1;
  EXPECT_EQ(error_of({{"C", cb}, {"D", db}}, bad),
            "evg: accumulator block at (0, 1) of 2x2 is not a block of the grid");
  // Options the CPU cannot run or that make no sense.
  const auto compile_error = [&](CompileOptions o) -> std::string {
    try {
      CompiledEpilogue("D = acc + C", sig, o);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(compile_error(options(3)), "evg: lanes=3 (expected 1, 2, 4, 8 or 16)");
  EXPECT_EQ(compile_error(options(4, true, 100)),
            "evg: compute_length=100 (expected a multiple of 16 from 16 to 1048576)");
}

}  // namespace
}  // namespace tg::evg::test
