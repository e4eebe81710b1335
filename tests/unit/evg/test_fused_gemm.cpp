// The fused GEMM from a string epilogue (frontend/compiled_gemm.h): D = epilogue(A · B) as one
// JIT kernel, against a naive GEMM in double followed by the epilogue in double. Each distinct
// epilogue is a cold compile of the GEMM templates (seconds), so the tests share few kernels.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "evg/allocation_counter.h"
#include "evg/evg_test_utils.h"
#include "tilegraph/core/dtype.h"
#include "tilegraph/evg/frontend/compiled_epilogue.h"
#include "tilegraph/evg/frontend/compiled_gemm.h"

namespace tg::evg::test {
namespace {

using frontend::Binding;
using frontend::Bindings;
using frontend::CompiledGemm;
using frontend::CompileOptions;
using frontend::ElementType;
using frontend::GemmInput;
using frontend::KernelWorkspace;
using frontend::OperandKind;
using frontend::Signature;

CompileOptions options(int lanes = 0) {
  CompileOptions o;
  o.lanes = lanes;
  o.compiler = &test_compiler();
  return o;
}

double gelu(double x) { return x / (1 + std::exp(-2 * 0.7978845608028654 * (x + 0.044715 * x * x * x))); }

// A rows x cols GEMM input of random values stored as `type` in either order with `pad` extra
// elements per leading dimension; value(r, c) is what the stored element means (after rounding).
struct Operand {
  ElementType type;
  int64_t rows, cols, ld;
  bool column_major;
  std::vector<uint8_t> storage;
  std::vector<double> values;  // row-major rows x cols

  Operand(int64_t rows_, int64_t cols_, ElementType type_, bool column_major_, int64_t pad, Rng& rng)
      : type(type_), rows(rows_), cols(cols_), ld((column_major_ ? rows_ : cols_) + pad), column_major(column_major_) {
    const size_t bytes = type == ElementType::kF32 ? 4 : 2;
    const int64_t lines = column_major ? cols : rows;
    storage.assign(size_t(std::max<int64_t>(lines * ld, 1)) * bytes, 0xff);  // padding: NaN patterns
    values.resize(size_t(rows * cols));
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c) {
        const float x = dist(rng);
        const size_t at = size_t(column_major ? c * ld + r : r * ld + c);
        double stored = x;
        if (type == ElementType::kF32) {
          std::memcpy(&storage[at * 4], &x, 4);
        } else if (type == ElementType::kF16) {
          const tg::f16 h = tg::f32_to_f16(x);
          std::memcpy(&storage[at * 2], &h, 2);
          stored = tg::f16_to_f32(h);
        } else {
          const tg::bf16 h = tg::f32_to_bf16(x);
          std::memcpy(&storage[at * 2], &h, 2);
          stored = tg::bf16_to_f32(h);
        }
        values[size_t(r * cols + c)] = stored;
      }
    }
  }

  GemmInput input() const {
    return column_major ? GemmInput::col_major(storage.data(), rows, cols, type, ld)
                        : GemmInput::row_major(storage.data(), rows, cols, type, ld);
  }
};

// A · B in double, and Σ|a b| per element (what bounds the f32 accumulation's error).
struct Product {
  std::vector<double> acc, magnitude;
};

Product naive_gemm(const Operand& a, const Operand& b) {
  const int64_t m = a.rows, n = b.cols, k = a.cols;
  Product p{std::vector<double>(size_t(m * n)), std::vector<double>(size_t(m * n))};
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0, magnitude = 0;
      for (int64_t q = 0; q < k; ++q) {
        const double t = a.values[size_t(i * k + q)] * b.values[size_t(q * n + j)];
        sum += t;
        magnitude += std::abs(t);
      }
      p.acc[size_t(i * n + j)] = sum;
      p.magnitude[size_t(i * n + j)] = magnitude;
    }
  }
  return p;
}

// f32 accumulation over k terms: within k ulps of the magnitude sum (FMA chains round once per
// term), plus the epilogue's few ulps of the result.
double tolerance(double magnitude, int64_t k, double result) {
  return 1.5 * (double(k) + 2) * 0x1p-24 * magnitude + 4e-7 * std::abs(result) + 1e-7;
}

struct Case {
  int64_t m, n, k;
  ElementType a_type, b_type;
  bool a_column_major, b_column_major;
};

// Sizes 0, 1 and primes; partial micro tiles (12 x 32 on AVX-512) and blocks (over 256 columns,
// over 720 rows); K over one K block (512); the streaming path (M = 1, M <= 8 with a
// column-major B); every element type and storage order.
std::vector<Case> cases() {
  const ElementType f32 = ElementType::kF32, f16 = ElementType::kF16, bf16 = ElementType::kBF16;
  return {
      {1, 1, 1, f32, f32, false, false},
      {0, 5, 3, f32, f32, false, false},
      {5, 0, 3, f32, f32, false, false},
      {4, 6, 0, f32, f32, false, false},
      {13, 29, 7, f32, f32, false, false},
      {13, 29, 7, f32, f32, true, true},
      {37, 61, 113, f16, f32, false, true},
      {37, 61, 113, bf16, bf16, true, false},
      {1, 97, 41, f32, f16, false, true},
      {1, 67, 300, bf16, f32, true, false},
      {7, 131, 59, f16, bf16, false, true},
      {97, 131, 259, f32, f32, false, false},
      {61, 401, 64, f32, bf16, true, true},
      {731, 41, 17, f16, f32, false, false},
      {24, 64, 600, f32, f32, false, false},
      // bf16 by bf16 with even K, A row-major and B column-major: multiplied in pairs where the
      // CPU has AVX512_BF16 (block_mmad.h), packed and streamed.
      {37, 61, 114, bf16, bf16, false, true},
      {1, 67, 300, bf16, bf16, false, true},
  };
}

std::string describe(const Case& c) {
  const auto order = [](bool column_major) { return column_major ? "col" : "row"; };
  return std::to_string(c.m) + "x" + std::to_string(c.n) + "x" + std::to_string(c.k) + " A " +
         std::string(frontend::element_name(c.a_type)) + " " + order(c.a_column_major) + " B " +
         std::string(frontend::element_name(c.b_type)) + " " + order(c.b_column_major);
}

Signature gelu_bias_signature() {
  Signature sig;
  sig.input("alpha", OperandKind::kScalar).input("bias", OperandKind::kRowVector).output("D");
  return sig;
}

const char* const kGeluBias = "D = gelu(acc * alpha + bias[col])";

// Runs gelu(acc * alpha + bias[col]) over every case on 1 and 2 threads: against the reference,
// and 2 threads bit for bit equal to 1.
void check_gelu_bias(const CompiledGemm& gemm, const std::vector<Case>& which) {
  for (const Case& c : which) {
    Rng rng(uint32_t(c.m * 131 + c.n * 7 + c.k));
    const Operand a(c.m, c.k, c.a_type, c.a_column_major, 3, rng);
    const Operand b(c.k, c.n, c.b_type, c.b_column_major, 1, rng);
    const std::vector<float> bias = random_vector(size_t(c.n), rng);
    const float alpha = 0.75f;
    const Product p = naive_gemm(a, b);
    std::vector<double> ref(size_t(c.m * c.n));
    for (int64_t i = 0; i < c.m; ++i) {
      for (int64_t j = 0; j < c.n; ++j)
        ref[size_t(i * c.n + j)] = gelu(p.acc[size_t(i * c.n + j)] * alpha + bias[size_t(j)]);
    }
    const int64_t ldd = c.n + 5;
    std::vector<float> first;
    for (int threads = 1; threads <= 2; ++threads) {
      std::vector<float> d(size_t(std::max<int64_t>(c.m * ldd, 1)), kUntouched);
      gemm.run(a.input(), b.input(),
               {{"alpha", Binding::value(alpha)},
                {"bias", Binding::vector(bias.data())},
                {"D", Binding::matrix(d.data(), ldd)}},
               thread_launcher(threads));
      int wrong = 0;
      std::string first_wrong;
      for (int64_t i = 0; i < c.m; ++i) {
        for (int64_t j = 0; j < ldd; ++j) {
          const float got = d[size_t(i * ldd + j)];
          bool ok;
          if (j >= c.n) {
            ok = got == kUntouched;  // the padding of D's rows
          } else {
            const double want = ref[size_t(i * c.n + j)];
            // gelu's slope is at most 1.13, alpha scales the accumulator's error.
            ok = std::abs(got - want) <= 1.13 * alpha * tolerance(p.magnitude[size_t(i * c.n + j)], c.k, want) + 1e-7;
          }
          if (!ok && wrong++ == 0) {
            std::ostringstream where;
            where << "(" << i << ", " << j << "): " << got;
            if (j < c.n) {
              where << " want " << ref[size_t(i * c.n + j)];
            } else {
              where << " in the padding";
            }
            first_wrong = where.str();
          }
        }
      }
      EXPECT_EQ(wrong, 0) << describe(c) << " threads " << threads << " lanes " << gemm.lanes() << ": first at "
                          << first_wrong;
      if (threads == 1) {
        first = d;
      } else {
        EXPECT_EQ(compare_bits(d, first), "") << describe(c) << ": 2 threads against 1";
      }
    }
  }
}

TEST(EvgFusedGemm, GeluBiasAgainstTheReference) {
  const CompiledGemm gemm(kGeluBias, gelu_bias_signature(), options());
  EXPECT_EQ(gemm.lanes(), __builtin_cpu_supports("avx512f") ? 16 : __builtin_cpu_supports("avx2") ? 8 : 4);
  EXPECT_NE(gemm.cpp_source().find("run_gemm<Epilogue>"), std::string::npos);
  check_gelu_bias(gemm, cases());
}

// The AVX2 GEMM, which the kernel names to kernel/target.h itself (a target pragma does not
// define __AVX2__ in C++). The portable GEMM needs no such name; test_cpu covers it.
TEST(EvgFusedGemm, GeluBiasOnAvx2) {
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("avx512f")) {
    GTEST_SKIP() << "the default kernel already is the widest this CPU runs";
  }
  std::vector<Case> some = cases();
  some.erase(some.begin() + 8, some.end() - 2);
  const CompiledGemm gemm(kGeluBias, gelu_bias_signature(), options(8));
  EXPECT_EQ(gemm.lanes(), 8);
  EXPECT_NE(gemm.cpp_source().find("#define TG_EVG_JIT_TARGET_AVX2 1"), std::string::npos);
  check_gelu_bias(gemm, some);
}

// Aux operands in any strides (a strided f16 matrix, a column vector with a stride, a padded
// f16 output), and row/col reductions as extra outputs.
TEST(EvgFusedGemm, StridedOperandsAndReductions) {
  Signature sig;
  sig.input("C", OperandKind::kMatrix, ElementType::kF16)
      .input("scale", OperandKind::kColVector)
      .input("bias", OperandKind::kRowVector)
      .output("D")
      .output("E", OperandKind::kMatrix, ElementType::kBF16)
      .output("r", OperandKind::kRowVector)
      .output("s", OperandKind::kColVector);
  const CompiledGemm gemm(
      "t = acc * scale[row] + C + bias[col]\n"
      "D = t\n"
      "E = bf16(relu(t))\n"
      "r = row_sum(t)\n"
      "s = col_max(t)\n",
      sig, options());
  for (const Case& c : {Case{45, 77, 19, ElementType::kF32, ElementType::kF16, false, true},
                        Case{3, 53, 31, ElementType::kBF16, ElementType::kF32, true, true},
                        Case{757, 403, 67, ElementType::kF32, ElementType::kF32, false, false},
                        Case{0, 9, 4, ElementType::kF32, ElementType::kF32, false, false},
                        Case{6, 11, 0, ElementType::kF32, ElementType::kF32, false, false}}) {
    Rng rng(uint32_t(c.m + c.n + c.k));
    const Operand a(c.m, c.k, c.a_type, c.a_column_major, 0, rng);
    const Operand b(c.k, c.n, c.b_type, c.b_column_major, 2, rng);
    const int64_t m = c.m, n = c.n;
    // C: element (r, col) at c_store[r * (2n + 1) + 2 col], f16.
    const int64_t c_row_stride = 2 * n + 1;
    std::vector<tg::f16> c_store(size_t(std::max<int64_t>(m * c_row_stride, 1)));
    const std::vector<float> c_values = random_vector(size_t(m * n), rng);
    const std::vector<float> scale_store = random_vector(size_t(std::max<int64_t>(3 * m, 1)), rng);  // stride 3
    const std::vector<float> bias = random_vector(size_t(n), rng);
    const Product p = naive_gemm(a, b);
    std::vector<double> ref_d(size_t(m * n)), ref_r(size_t(n), 0.0), ref_s(size_t(m), -INFINITY);
    std::vector<double> tol_d(size_t(m * n)), tol_r(size_t(n), 0.0);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        const tg::f16 h = tg::f32_to_f16(c_values[size_t(i * n + j)]);
        c_store[size_t(i * c_row_stride + 2 * j)] = h;
        const double scale = scale_store[size_t(3 * i)];
        const double t = p.acc[size_t(i * n + j)] * scale + tg::f16_to_f32(h) + bias[size_t(j)];
        const double tol =
            std::abs(scale) * tolerance(p.magnitude[size_t(i * n + j)], c.k, 0) + 4e-7 * (std::abs(t) + 2);
        ref_d[size_t(i * n + j)] = t;
        tol_d[size_t(i * n + j)] = tol;
        ref_r[size_t(j)] += t;
        tol_r[size_t(j)] += tol + 2e-7 * std::abs(t);
        ref_s[size_t(i)] = std::max(ref_s[size_t(i)], t);
      }
    }
    std::vector<float> first_d, first_r, first_s;
    for (int threads = 1; threads <= 2; ++threads) {
      std::vector<float> d(static_cast<size_t>(m * n)), r(static_cast<size_t>(n)), s(static_cast<size_t>(m));
      const int64_t lde = n + 3;
      std::vector<tg::bf16> e(size_t(std::max<int64_t>(m * lde, 1)), tg::bf16{0x7fc1});
      gemm.run(a.input(), b.input(),
               {{"C", Binding::strided(c_store.data(), c_row_stride, 2)},
                {"scale", Binding::vector(scale_store.data(), 3)},
                {"bias", Binding::vector(bias.data())},
                {"D", Binding::matrix(d.data(), n)},
                {"E", Binding::matrix(e.data(), lde)},
                {"r", Binding::vector(r.data())},
                {"s", Binding::vector(s.data())}},
               thread_launcher(threads));
      int wrong = 0;
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < lde; ++j) {
          const tg::bf16 got = e[size_t(i * lde + j)];
          if (j >= n) {
            wrong += got.bits != 0x7fc1;
            continue;
          }
          const size_t at = size_t(i * n + j);
          wrong += !(std::abs(d[at] - ref_d[at]) <= tol_d[at]);
          // E is bf16(relu(D's value)), exactly.
          wrong += got.bits != tg::f32_to_bf16(std::max(d[at], 0.0f)).bits;
        }
        // The largest of the row's t, each within its tolerance.
        wrong += !(std::abs(s[size_t(i)] - ref_s[size_t(i)]) <= 1e-5 * (std::abs(ref_s[size_t(i)]) + 1));
      }
      for (int64_t j = 0; j < n; ++j) wrong += !(std::abs(r[size_t(j)] - ref_r[size_t(j)]) <= tol_r[size_t(j)] + 1e-6);
      EXPECT_EQ(wrong, 0) << describe(c) << " threads " << threads;
      if (threads == 1) {
        first_d = d, first_r = r, first_s = s;
      } else {
        // Row sums fold per block row (independent of how columns are cut), maxima in any order.
        EXPECT_EQ(compare_bits(d, first_d), "") << describe(c);
        EXPECT_EQ(compare_bits(r, first_r), "") << describe(c);
        EXPECT_EQ(compare_bits(s, first_s), "") << describe(c);
      }
    }
  }
}

// A residual added in place: C bound to D's own memory. The GEMM must not sum blocks in D then
// (block.h, accumulate_in_place), and with C apart it does, which must not change a bit.
TEST(EvgFusedGemm, ResidualBoundToTheOutput) {
  Signature sig;
  sig.input("C", OperandKind::kMatrix).output("D");
  const CompiledGemm gemm("D = relu(acc + C)", sig, options());
  // Whole micro tiles, one or two K blocks; the streaming path (M = 1, few rows with B column-major).
  for (const Case& c : {Case{37, 64, 50, ElementType::kF32, ElementType::kF32, false, false},
                        Case{37, 64, 300, ElementType::kF32, ElementType::kF32, false, false},
                        Case{1, 96, 40, ElementType::kF32, ElementType::kF16, false, true},
                        Case{5, 64, 33, ElementType::kF32, ElementType::kF32, false, true}}) {
    Rng rng(uint32_t(c.m * 3 + c.k));
    const Operand a(c.m, c.k, c.a_type, c.a_column_major, 0, rng);
    const Operand b(c.k, c.n, c.b_type, c.b_column_major, 0, rng);
    const int64_t ldd = c.n + 3;
    const std::vector<float> residual = random_vector(size_t(c.m * ldd), rng);
    const Product p = naive_gemm(a, b);
    for (int threads = 1; threads <= 2; ++threads) {
      std::vector<float> apart(residual.size(), kUntouched), shared = residual;
      gemm.run(a.input(), b.input(),
               {{"C", Binding::matrix(residual.data(), ldd)}, {"D", Binding::matrix(apart.data(), ldd)}},
               thread_launcher(threads));
      gemm.run(a.input(), b.input(),
               {{"C", Binding::matrix(shared.data(), ldd)}, {"D", Binding::matrix(shared.data(), ldd)}},
               thread_launcher(threads));
      int wrong = 0;
      for (int64_t i = 0; i < c.m; ++i) {
        for (int64_t j = 0; j < c.n; ++j) {
          const size_t at = size_t(i * ldd + j), ij = size_t(i * c.n + j);
          const double want = std::max(0.0, p.acc[ij] + residual[at]);
          wrong += !(std::abs(apart[at] - want) <= tolerance(p.magnitude[ij], c.k, want));
        }
        for (int64_t j = c.n; j < ldd; ++j) wrong += apart[size_t(i * ldd + j)] != kUntouched;
      }
      EXPECT_EQ(wrong, 0) << describe(c) << " threads " << threads;
      for (int64_t i = 0; i < c.m; ++i) {
        for (int64_t j = c.n; j < ldd; ++j) apart[size_t(i * ldd + j)] = residual[size_t(i * ldd + j)];
      }
      EXPECT_EQ(compare_bits(shared, apart), "") << describe(c) << " threads " << threads;
    }
  }
}

// One caller workspace across kernels and thread counts, and what it keeps between runs.
TEST(EvgFusedGemm, CallerWorkspace) {
  const CompiledGemm gemm(kGeluBias, gelu_bias_signature(), options());
  KernelWorkspace workspace;
  Rng rng(5);
  const Operand a(50, 30, ElementType::kF32, false, 0, rng), b(30, 70, ElementType::kF32, false, 0, rng);
  const std::vector<float> bias = random_vector(70, rng);
  std::vector<float> reference(50 * 70), d(50 * 70);
  gemm.run(a.input(), b.input(),
           {{"alpha", Binding::value(1.0f)},
            {"bias", Binding::vector(bias.data())},
            {"D", Binding::matrix(reference.data(), 70)}});
  for (const int threads : {1, 2, 1}) {
    std::fill(d.begin(), d.end(), kUntouched);
    gemm.run(
        a.input(), b.input(),
        {{"alpha", Binding::value(1.0f)}, {"bias", Binding::vector(bias.data())}, {"D", Binding::matrix(d.data(), 70)}},
        thread_launcher(threads), workspace);
    EXPECT_EQ(compare_bits(d, reference), "") << "threads " << threads;
  }
  const size_t capacity = workspace.capacity();
  EXPECT_GT(capacity, 0u);
  gemm.run(
      a.input(), b.input(),
      {{"alpha", Binding::value(1.0f)}, {"bias", Binding::vector(bias.data())}, {"D", Binding::matrix(d.data(), 70)}},
      Launcher::serial(), workspace);
  EXPECT_EQ(workspace.capacity(), capacity) << "a steady run reallocated its workspace";
}

// After the first run has sized the kernel's workspace, runs allocate nothing: not the GEMM's
// packing space, not the epilogue's scratch, not the bindings (both kernel kinds).
TEST(EvgFusedGemm, SteadyRunsAllocateNothing) {
  const CompiledGemm gemm(kGeluBias, gelu_bias_signature(), options());
  Rng rng(9);
  const Operand a(40, 300, ElementType::kF16, false, 0, rng), b(300, 50, ElementType::kF32, true, 0, rng);
  const std::vector<float> bias = random_vector(50, rng);
  std::vector<float> d(40 * 50);
  const Bindings bindings{
      {"alpha", Binding::value(1.0f)}, {"bias", Binding::vector(bias.data())}, {"D", Binding::matrix(d.data(), 50)}};
  gemm.run(a.input(), b.input(), bindings);
  {
    const CountAllocations counter;
    gemm.run(a.input(), b.input(), bindings);
    EXPECT_EQ(counter.count(), 0) << "fused GEMM";
  }
  const frontend::CompiledEpilogue epilogue(kGeluBias, gelu_bias_signature(), options());
  const std::vector<AccBlock> blocks = {{d.data(), 50, 0, 0, 40, 50}};
  epilogue.run({40, 50, 1}, {40, 50}, blocks, bindings);
  {
    const CountAllocations counter;
    epilogue.run({40, 50, 1}, {40, 50}, blocks, bindings);
    EXPECT_EQ(counter.count(), 0) << "epilogue";
  }
}

// The reductions' partials live in the workspace too: a steady run with row and column
// reductions allocates nothing, and gives the same sums as a run on a fresh workspace.
TEST(EvgFusedGemm, SteadyRunsWithReductionsAllocateNothing) {
  Signature sig;
  sig.input("bias", OperandKind::kRowVector)
      .output("D")
      .output("r", OperandKind::kRowVector)
      .output("s", OperandKind::kColVector);
  const char* source = "D = acc + bias[col]\nr = row_sum(D)\ns = col_max(D)\n";
  const CompiledGemm gemm(source, sig, options());
  Rng rng(13);
  const int64_t m = 97, n = 61, k = 40;
  const Operand a(m, k, ElementType::kF32, false, 0, rng), b(k, n, ElementType::kF32, false, 0, rng);
  const std::vector<float> bias = random_vector(size_t(n), rng);
  std::vector<float> d(static_cast<size_t>(m * n)), r(static_cast<size_t>(n)), s(static_cast<size_t>(m));
  const Bindings bindings{{"bias", Binding::vector(bias.data())},
                          {"D", Binding::matrix(d.data(), n)},
                          {"r", Binding::vector(r.data())},
                          {"s", Binding::vector(s.data())}};
  gemm.run(a.input(), b.input(), bindings);
  const std::vector<float> first_r = r, first_s = s;
  {
    const CountAllocations counter;
    gemm.run(a.input(), b.input(), bindings);
    EXPECT_EQ(counter.count(), 0) << "fused GEMM with reductions";
  }
  EXPECT_EQ(compare_bits(r, first_r), "") << "the partials of the last run leaked into this one";
  EXPECT_EQ(compare_bits(s, first_s), "");
  double worst = 0;
  for (int64_t j = 0; j < n; ++j) {
    double sum = 0;
    for (int64_t i = 0; i < m; ++i) sum += d[size_t(i * n + j)];
    worst = std::max(worst, std::abs(sum - r[size_t(j)]) / (std::abs(sum) + 1));
  }
  EXPECT_LT(worst, 1e-5) << "row_sum against the stored D";

  const frontend::CompiledEpilogue epilogue(source, sig, options());
  const std::vector<AccBlock> blocks = {{d.data(), n, 0, 0, m, n}};
  epilogue.run({m, n, 1}, {m, n}, blocks, bindings);
  {
    const CountAllocations counter;
    epilogue.run({m, n, 1}, {m, n}, blocks, bindings);
    EXPECT_EQ(counter.count(), 0) << "epilogue with reductions";
  }
}

TEST(EvgKernelWorkspace, ZeroesTheEpiloguePartOnlyWhenItIsNewToTheKernel) {
  KernelWorkspace w;
  const int kernel_a = 0, kernel_b = 0;
  auto* p = static_cast<float*>(w.prepare({256, 1024}, &kernel_a));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
  EXPECT_GE(w.capacity(), 1280u);
  EXPECT_EQ(p[0], 0.0f);
  EXPECT_EQ(p[63], 0.0f);
  p[0] = 1.0f;   // scratch a run left behind
  p[64] = 2.0f;  // GEMM workspace
  EXPECT_EQ(w.prepare({256, 1024}, &kernel_a), p);
  EXPECT_EQ(p[0], 1.0f) << "the same kernel's scratch is kept";
  p[100] = 3.0f;  // the GEMM part of the last run ...
  EXPECT_EQ(w.prepare({512, 512}, &kernel_a), p);
  EXPECT_EQ(p[100], 0.0f) << "... is zeroed when it becomes epilogue scratch";
  p[0] = 4.0f;
  EXPECT_EQ(w.prepare({512, 512}, &kernel_b), p);
  EXPECT_EQ(p[0], 0.0f) << "another kernel's scratch is zeroed";
  w.prepare({512, 1 << 20}, &kernel_b);
  EXPECT_GE(w.capacity(), size_t(512 + (1 << 20)));
}

std::string run_error(const CompiledGemm& gemm, const GemmInput& a, const GemmInput& b, const Bindings& bindings) {
  try {
    gemm.run(a, b, bindings);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(EvgFusedGemm, Errors) {
  const CompiledGemm gemm(kGeluBias, gelu_bias_signature(), options());
  std::vector<float> a(6 * 5), b(5 * 7), bias(7), d(6 * 7);
  const Bindings ok{
      {"alpha", Binding::value(1)}, {"bias", Binding::vector(bias.data())}, {"D", Binding::matrix(d.data(), 7)}};
  const GemmInput a_in = GemmInput::row_major(a.data(), 6, 5), b_in = GemmInput::row_major(b.data(), 5, 7);
  EXPECT_EQ(run_error(gemm, a_in, b_in, ok), "");
  EXPECT_EQ(run_error(gemm, a_in, GemmInput::row_major(b.data(), 4, 7), ok),
            "evg gemm: A is 6x5 and B is 4x7: A's columns must equal B's rows (K)");
  EXPECT_EQ(run_error(gemm, GemmInput::col_major(a.data(), 6, 4), b_in, ok),
            "evg gemm: A is 6x4 column-major and B is 5x7: A's columns must equal B's rows (K)");
  EXPECT_EQ(run_error(gemm, GemmInput::row_major(a.data(), -1, 5), b_in, ok), "evg gemm: A (-1x5) has a negative size");
  EXPECT_EQ(run_error(gemm, GemmInput::row_major(a.data(), 6, 5, ElementType::kF32, 4), b_in, ok),
            "evg gemm: A (6x5) has a leading dimension of 4, below the 5 elements it must hold");
  EXPECT_EQ(run_error(gemm, a_in, GemmInput::col_major(b.data(), 5, 7, ElementType::kF32, 3), ok),
            "evg gemm: B (5x7 column-major) has a leading dimension of 3, below the 5 elements it must hold");
  EXPECT_EQ(run_error(gemm, a_in, GemmInput::row_major(nullptr, 5, 7), ok), "evg gemm: B (5x7) has no data");
  EXPECT_EQ(run_error(gemm, GemmInput::row_major(a.data(), 6, 5, ElementType::kI8), b_in, ok),
            "evg gemm: A (6x5) is i8; the GEMM takes f32, f16 or bf16");
  EXPECT_EQ(run_error(gemm, a_in, b_in, {{"alpha", Binding::value(1)}, {"D", Binding::matrix(d.data(), 7)}}),
            "evg: no binding for row vector 'bias'");
  Bindings extra = ok;
  extra.emplace("Q", Binding::value(2));
  EXPECT_EQ(run_error(gemm, a_in, b_in, extra), "evg: binding for 'Q', which the epilogue does not declare");
  // Reported by a node inside the kernel, through the params' error buffer.
  Bindings no_output = ok;
  no_output["D"] = Binding::matrix(nullptr, 7);
  EXPECT_EQ(run_error(gemm, a_in, b_in, no_output), "evg node 6 (VisitorAuxStore): null pointer");
  // An empty product needs no data.
  EXPECT_EQ(run_error(gemm, GemmInput::row_major(nullptr, 0, 5), b_in, ok), "");
}

}  // namespace
}  // namespace tg::evg::test
