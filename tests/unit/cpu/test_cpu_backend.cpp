// The CPU backend's own machinery (thread pool, feature detection, ISA selection, error
// propagation) and a sample of ops against the reference on every ISA this machine can run. The
// exhaustive per-op sweep lives in test_backend_ops.cpp.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/expect_error.h"
#include "common/tensor_utils.h"
#include "cpu_backend_internal.h"
#include "interleaved_rows.h"
#include "prepared_weights.h"
#include "thread_pool.h"
#include "tilegraph/core/error.h"
#include "tilegraph/core/graph.h"
#include "tilegraph/core/ops.h"
#include "tilegraph/core/quant.h"
#include "tilegraph/core/reference.h"
#include "tilegraph/cpu/cpu_backend.h"
#include "tilegraph/runtime/graph_mode.h"
#include "tilegraph/runtime/reference_backend.h"
#include "vec.h"

namespace tg::cpu {
namespace {

using test::Layout;

// ---- thread pool ----

TEST(ThreadPool, RunsEveryTaskOnceForOneAndManyThreads) {
  for (int threads : {1, 2, 7}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.size(), threads);
    for (int region = 0; region < 2000; ++region) {
      const int tasks = 1 + region % 9;
      std::vector<std::atomic<int>> runs(static_cast<size_t>(tasks));
      std::atomic<int> seen_nth{-1};
      pool.parallel_for(tasks, [&](int ith, int nth) {
        runs[size_t(ith)].fetch_add(1);
        seen_nth.store(nth);
      });
      const int expected_nth = std::min(tasks, threads);
      ASSERT_EQ(seen_nth.load(), expected_nth) << "threads=" << threads << " region=" << region;
      for (int i = 0; i < tasks; ++i) {
        ASSERT_EQ(runs[size_t(i)].load(), i < expected_nth ? 1 : 0)
            << "task " << i << " threads=" << threads << " region=" << region;
      }
    }
  }
}

TEST(ThreadPool, CallerRunsTaskZero) {
  ThreadPool pool(4);
  std::thread::id task_zero;
  pool.parallel_for(4, [&](int ith, int) {
    if (ith == 0) task_zero = std::this_thread::get_id();
  });
  EXPECT_EQ(task_zero, std::this_thread::get_id());
}

TEST(ThreadPool, WakesWorkersThatFellAsleep) {
  ThreadPool pool(3);
  for (int round = 0; round < 3; ++round) {
    // Long enough for every worker to stop spinning and block.
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    std::atomic<int> ran{0};
    pool.parallel_for(3, [&](int, int) { ran.fetch_add(1); });
    EXPECT_EQ(ran.load(), 3);
  }
}

TEST(ThreadPool, RethrowsATaskErrorAfterAllTasksFinish) {
  ThreadPool pool(4);
  std::atomic<int> finished{0};
  try {
    pool.parallel_for(4, [&](int ith, int) {
      if (ith == 3) throw Error("task three failed");
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      finished.fetch_add(1);
    });
    FAIL() << "expected an exception";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "task three failed");
  }
  EXPECT_EQ(finished.load(), 3);
  // The pool is usable afterwards.
  std::atomic<int> ran{0};
  pool.parallel_for(4, [&](int, int) { ran.fetch_add(1); });
  EXPECT_EQ(ran.load(), 4);
}

TEST(ThreadPool, RejectsBadThreadCounts) {
  EXPECT_THROW(ThreadPool(0), Error);
  EXPECT_THROW(ThreadPool(-3), Error);
}

// A pool the system cannot give all its threads is an error, and the workers that did start are
// stopped (before, their std::thread objects terminated the program). Run in a child process
// whose thread limit is lowered: as root, under another user, whose limit then applies.
TEST(ThreadPool, TooFewSystemThreadsIsAnError) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const rlimit limit{4, 4};
    if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) _exit(3);
    if (setrlimit(RLIMIT_NPROC, &limit) != 0) _exit(3);
    try {
      ThreadPool pool(64);
    } catch (const Error& e) {
      _exit(std::string(e.what()).find("cannot start 63 worker threads") != std::string::npos ? 0 : 2);
    }
    _exit(1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "the child died of signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: no error, 2: another message, 3: cannot lower the limit";
}

TEST(CpuBackend, ReportsItsThreadCount) {
  EXPECT_EQ(make_cpu_backend(BackendOptions{3})->threads(), 3);
  EXPECT_EQ(make_cpu_backend(BackendOptions{1})->threads(), 1);
  EXPECT_EQ(make_reference_backend()->threads(), 1);
}

// ggml's limit (GGML_MAX_N_THREADS): more threads only cost the seconds it takes to start them.
TEST(CpuBackend, RefusesMoreThreadsThanGgml) {
  EXPECT_EQ(kMaxThreads, 512);
  EXPECT_EQ(make_cpu_backend(BackendOptions{512})->threads(), 512);
  test::expect_error([] { make_cpu_backend(BackendOptions{513}); }, "cpu: thread count must be in [1, 512], got 513");
}

// ---- features and ISA selection ----

TEST(CpuFeatures, StringListsDetectedFeatures) {
  const CpuFeatures& f = cpu_features();
  const std::string s = cpu_features_string();
  EXPECT_FALSE(s.empty());
  EXPECT_EQ(f.avx2, s.find("AVX2") != std::string::npos) << s;
  EXPECT_EQ(f.avx512f, s.find("AVX-512F") != std::string::npos) << s;
  // Dependent features are only reported with what they need.
  EXPECT_TRUE(!f.avx2 || f.avx);
  EXPECT_TRUE(!f.avx512bw || f.avx512f);
  EXPECT_TRUE(!f.avx512dq || f.avx512f);
  EXPECT_TRUE(!f.amx_bf16 || f.amx_tile);
}

TEST(CpuFeatures, BestIsaMatchesFeatures) {
  const CpuFeatures& f = cpu_features();
  const Isa isa = best_isa();
  const bool avx512 = f.avx512f && f.avx512bw && f.avx512vl && f.avx512dq && f.avx2 && f.fma && f.f16c;
  EXPECT_EQ(isa == Isa::AVX512, avx512 && !f.avx512_vnni);
  EXPECT_EQ(isa == Isa::AVX512_VNNI, avx512 && f.avx512_vnni && !f.avx512_bf16);
  EXPECT_EQ(isa == Isa::AVX512_BF16, avx512 && f.avx512_vnni && f.avx512_bf16 && !f.amx_int8);
  EXPECT_EQ(isa == Isa::AMX, avx512 && f.avx512_vnni && f.avx512_bf16 && f.amx_int8);
  EXPECT_TRUE(isa == Isa::SCALAR || (f.avx2 && f.fma && f.f16c));
  EXPECT_EQ(vec_kernels(isa).isa, isa);
}

TEST(CpuBackend, NameAndDefaultConstruction) {
  const std::unique_ptr<Backend> backend = make_cpu_backend();
  EXPECT_EQ(backend->name(), "cpu");
}

// ---- vector primitives: every runnable ISA against double-precision math ----

double max_relative_error(const std::vector<float>& got, const std::vector<double>& want) {
  double worst = 0.0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double scale = std::max(std::abs(want[i]), 1e-30);
    worst = std::max(worst, std::abs(got[i] - want[i]) / scale);
  }
  return worst;
}

TEST(VecKernels, TranscendentalsAreAccurate) {
  std::vector<float> x;
  for (float v = -20.0f; v <= 20.0f; v += 0.0137f) x.push_back(v);
  const int64_t n = int64_t(x.size());
  struct Case {
    UnaryOp op;
    double (*exact)(double);
    double bound;
  };
  const Case cases[] = {
      {UnaryOp::EXP, [](double v) { return std::exp(v); }, 4e-7},
      {UnaryOp::TANH, [](double v) { return std::tanh(v); }, 4e-7},
      {UnaryOp::SIGMOID, [](double v) { return 1.0 / (1.0 + std::exp(-v)); }, 4e-7},
      {UnaryOp::SILU, [](double v) { return v / (1.0 + std::exp(-v)); }, 4e-7},
      {UnaryOp::GELU,
       [](double v) { return 0.5 * v * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v))); }, 1e-6},
  };
  for (Isa isa : runnable_isas()) {
    const VecKernels& vec = vec_kernels(isa);
    for (const Case& c : cases) {
      std::vector<float> y(x.size());
      vec.unary(c.op, n, y.data(), x.data());
      std::vector<double> want(x.size());
      for (size_t i = 0; i < x.size(); ++i) want[i] = c.exact(x[i]);
      // Relative error where results are not tiny: the tails of gelu and silu (~1e-8 at x = -20)
      // inherit the f32 rounding of their argument, amplified by exp's slope.
      std::vector<float> kept_got;
      std::vector<double> kept_want;
      for (size_t i = 0; i < x.size(); ++i) {
        if (std::abs(want[i]) > 1e-3) {
          kept_got.push_back(y[i]);
          kept_want.push_back(want[i]);
        }
      }
      EXPECT_LT(max_relative_error(kept_got, kept_want), c.bound) << isa_name(isa) << " " << unary_op_name(c.op);
    }
    // gelu_erf: absolute error of erf ~1.5e-7, scaled by x/2.
    std::vector<float> y(x.size());
    vec.unary(UnaryOp::GELU_ERF, n, y.data(), x.data());
    for (size_t i = 0; i < x.size(); ++i) {
      const double want = 0.5 * x[i] * (1.0 + std::erf(x[i] / std::sqrt(2.0)));
      ASSERT_NEAR(y[i], want, 2e-7 * std::max(1.0, std::abs(double(x[i])))) << isa_name(isa) << " x=" << x[i];
    }
  }
}

TEST(VecKernels, ExpHandlesLimits) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> x = {-inf, -200.0f, -100.0f, -87.5f, 0.0f, 88.5f, 100.0f, inf};
  for (Isa isa : runnable_isas()) {
    std::vector<float> y(x.size());
    vec_kernels(isa).unary(UnaryOp::EXP, int64_t(x.size()), y.data(), x.data());
    EXPECT_EQ(y[0], 0.0f) << isa_name(isa);
    EXPECT_EQ(y[1], 0.0f) << isa_name(isa);
    EXPECT_NEAR(y[2], std::exp(-100.0), 1e-45) << isa_name(isa);  // subnormal
    EXPECT_NEAR(y[3] / std::exp(-87.5), 1.0, 1e-6) << isa_name(isa);
    EXPECT_EQ(y[4], 1.0f) << isa_name(isa);
    EXPECT_NEAR(y[5] / std::exp(88.5), 1.0, 1e-6) << isa_name(isa);
    EXPECT_EQ(y[6], inf) << isa_name(isa);
    EXPECT_EQ(y[7], inf) << isa_name(isa);
  }
}

TEST(VecKernels, ConversionsMatchTheScalarDefinitions) {
  test::Rng rng(7);
  std::uniform_real_distribution<float> dist(-70000.0f, 70000.0f);
  std::vector<float> x(1000);
  for (float& v : x) v = dist(rng) * (rng() % 2 ? 1.0f : 1e-6f);  // normals, subnormal halves
  x[0] = std::numeric_limits<float>::quiet_NaN();
  x[1] = -std::numeric_limits<float>::infinity();
  const int64_t n = int64_t(x.size());
  for (Isa isa : runnable_isas()) {
    const VecKernels& vec = vec_kernels(isa);
    std::vector<uint16_t> half(x.size()), brain(x.size());
    vec.f32_to_f16(n, half.data(), x.data());
    vec.f32_to_bf16(n, brain.data(), x.data());
    std::vector<float> back_half(x.size()), back_brain(x.size());
    vec.f16_to_f32(n, back_half.data(), half.data());
    vec.bf16_to_f32(n, back_brain.data(), brain.data());
    for (size_t i = 1; i < x.size(); ++i) {  // NaN payloads may differ; the rest must be exact
      ASSERT_EQ(half[i], f32_to_f16(x[i]).bits) << isa_name(isa) << " x=" << x[i];
      ASSERT_EQ(brain[i], f32_to_bf16(x[i]).bits) << isa_name(isa) << " x=" << x[i];
      ASSERT_EQ(back_half[i], f16_to_f32(f16{half[i]})) << isa_name(isa);
      ASSERT_EQ(back_brain[i], bf16_to_f32(bf16{brain[i]})) << isa_name(isa);
    }
    EXPECT_TRUE(std::isnan(back_half[0]) && std::isnan(back_brain[0])) << isa_name(isa);
  }
}

TEST(VecKernels, RowBlockPrimitivesMatchPlainLoops) {
  test::Rng rng(11);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (Isa isa : runnable_isas()) {
    const VecKernels& vec = vec_kernels(isa);
    for (DType type : {DType::F32, DType::F16, DType::BF16}) {
      for (int64_t n : {1, 7, 16, 45, 64, 113, 130, 300}) {
        const int64_t count = 11, stride_elems = n + 3;  // rows padded apart
        const size_t elem = dtype_traits(type).type_size;
        std::vector<char> rows(static_cast<size_t>(count * stride_elems) * elem);
        std::vector<float> row_values(static_cast<size_t>(count * n)), x(static_cast<size_t>(n));
        std::vector<float> s(static_cast<size_t>(count)), y(static_cast<size_t>(n));
        for (int64_t j = 0; j < count; ++j) {
          for (int64_t i = 0; i < n; ++i) {
            float v = dist(rng);
            char* p = rows.data() + size_t(j * stride_elems + i) * elem;
            row_from_f32(type, &v, p, 1);
            row_to_f32(type, p, &v, 1);
            row_values[size_t(j * n + i)] = v;
          }
          s[size_t(j)] = j % 4 == 2 ? 0.0f : dist(rng);  // zero weights are skipped
        }
        for (float& v : x) v = dist(rng);
        for (float& v : y) v = dist(rng);

        std::vector<float> dots(static_cast<size_t>(count)), out = y;
        vec.dot_rows(type, n, count, rows.data(), size_t(stride_elems) * elem, x.data(), dots.data());
        vec.axpy_rows(type, n, count, rows.data(), size_t(stride_elems) * elem, s.data(), out.data());
        for (int64_t j = 0; j < count; ++j) {
          double want = 0.0;
          for (int64_t i = 0; i < n; ++i) want += double(row_values[size_t(j * n + i)]) * x[size_t(i)];
          ASSERT_NEAR(dots[size_t(j)], want, 1e-5 * double(n))
              << isa_name(isa) << " " << dtype_name(type) << " n=" << n;
        }
        for (int64_t i = 0; i < n; ++i) {
          double want = y[size_t(i)];
          for (int64_t j = 0; j < count; ++j) want += double(s[size_t(j)]) * row_values[size_t(j * n + i)];
          ASSERT_NEAR(out[size_t(i)], want, 1e-5) << isa_name(isa) << " " << dtype_name(type) << " n=" << n;
        }
      }
    }
  }
}

// ---- ops against the reference ----

// Runs `out`'s graph on the backend, then on the reference, and returns the NMSE between the
// two results. Tensors written in place (`in_place`) are restored before the reference runs.
double compare_with_reference(Backend& backend, Tensor* out, std::vector<Tensor*> in_place = {}) {
  const Graph graph = Graph::build(out);
  std::vector<std::vector<char>> saved;
  for (Tensor* t : in_place) {
    saved.emplace_back(static_cast<char*>(t->data), static_cast<char*>(t->data) + t->nbytes());
  }
  backend.compute(graph);
  const std::vector<float> got = test::read_f32(*out);
  for (size_t i = 0; i < in_place.size(); ++i) std::memcpy(in_place[i]->data, saved[i].data(), saved[i].size());
  reference::compute_graph(graph);
  const std::vector<float> want = test::read_f32(*out);
  const double error = test::nmse(got, want);
  if (!(error < 1e-4)) ADD_FAILURE() << test::describe_difference(got, want);
  return error;
}

struct OpCase {
  std::string name;
  double bound;
  std::function<Tensor*(Context&, test::Rng&)> build;
  std::function<std::vector<Tensor*>(Tensor*)> in_place = [](Tensor*) { return std::vector<Tensor*>{}; };
};

Tensor* random_tensor(Context& ctx, test::Rng& rng, DType type, std::array<int64_t, 4> ne,
                      Layout layout = Layout::kContiguous, float lo = -1.0f, float hi = 1.0f) {
  Tensor* t = test::new_tensor(ctx, type, ne, layout);
  test::fill_uniform(*t, rng, lo, hi);
  return t;
}

Tensor* index_tensor(Context& ctx, std::array<int64_t, 4> ne, int32_t bound, test::Rng& rng) {
  Tensor* t = ctx.new_tensor(DType::I32, {ne[0], ne[1], ne[2], ne[3]});
  test::fill_uniform(*t, rng, 0.0f, float(bound));
  return t;
}

std::vector<OpCase> op_cases() {
  std::vector<OpCase> cases;
  for (DType a_type : {DType::F32, DType::F16, DType::BF16, DType::Q8_0}) {
    for (int64_t n : {1, 5, 40}) {
      cases.push_back({"mul_mat_" + std::string(dtype_name(a_type)) + "_n" + std::to_string(n), 1e-6,
                       [=](Context& ctx, test::Rng& rng) {
                         Tensor* a = random_tensor(ctx, rng, a_type, {96, 45, 2, 1});
                         Tensor* b = random_tensor(ctx, rng, DType::F32, {96, n, 4, 1});
                         return mul_mat(ctx, a, b);
                       }});
    }
  }
  cases.push_back({"mul_mat_vec_transposed_f16_a_batched", 1e-6, [](Context& ctx, test::Rng& rng) {
                     Tensor* a = random_tensor(ctx, rng, DType::F16, {50, 30, 3, 1}, Layout::kTransposed);
                     Tensor* b = random_tensor(ctx, rng, DType::F32, {50, 1, 6, 2}, Layout::kPermuted);
                     return mul_mat(ctx, a, b);
                   }});
  cases.push_back({"mul_mat_deep_k_f16_b_transposed_a", 1e-6, [](Context& ctx, test::Rng& rng) {
                     Tensor* a = random_tensor(ctx, rng, DType::F32, {600, 70, 1, 1}, Layout::kTransposed);
                     Tensor* b = random_tensor(ctx, rng, DType::F16, {600, 33, 1, 1}, Layout::kPaddedRows);
                     return mul_mat(ctx, a, b);
                   }});
  cases.push_back({"add_broadcast_rows", 1e-12, [](Context& ctx, test::Rng& rng) {
                     Tensor* a = random_tensor(ctx, rng, DType::F32, {67, 5, 3, 2}, Layout::kPermuted);
                     Tensor* b = random_tensor(ctx, rng, DType::F32, {67, 1, 3, 1});
                     return add(ctx, a, b);
                   }});
  cases.push_back({"div_broadcast_scalar_f16", 1e-6, [](Context& ctx, test::Rng& rng) {
                     Tensor* a = random_tensor(ctx, rng, DType::F16, {33, 7, 1, 1});
                     Tensor* b = random_tensor(ctx, rng, DType::F32, {1, 7, 1, 1}, Layout::kContiguous, 0.5f, 2.0f);
                     return div(ctx, a, b);
                   }});
  cases.push_back({"mul_tiled_b", 1e-12, [](Context& ctx, test::Rng& rng) {
                     Tensor* a = random_tensor(ctx, rng, DType::F32, {48, 6, 1, 1});
                     Tensor* b = random_tensor(ctx, rng, DType::F32, {12, 3, 1, 1});
                     return mul(ctx, a, b);
                   }});
  for (int op = 0; op < kUnaryOpCount; ++op) {
    cases.push_back({"unary_" + std::string(unary_op_name(UnaryOp(op))), 1e-9, [op](Context& ctx, test::Rng& rng) {
                       const bool positive = UnaryOp(op) == UnaryOp::SQRT || UnaryOp(op) == UnaryOp::RSQRT;
                       Tensor* a = random_tensor(ctx, rng, DType::F32, {131, 9, 1, 1}, Layout::kTransposed,
                                                 positive ? 0.1f : -4.0f, 4.0f);
                       return unary(ctx, a, UnaryOp(op));
                     }});
  }
  cases.push_back({"swiglu_fused_swapped_bf16", 1e-5, [](Context& ctx, test::Rng& rng) {
                     Tensor* a = random_tensor(ctx, rng, DType::BF16, {70, 4, 1, 1});
                     return glu(ctx, a, GluOp::SWIGLU, true);
                   }});
  cases.push_back({"geglu_split", 1e-9, [](Context& ctx, test::Rng& rng) {
                     Tensor* a = random_tensor(ctx, rng, DType::F32, {45, 4, 1, 1});
                     Tensor* b = random_tensor(ctx, rng, DType::F32, {45, 4, 1, 1}, Layout::kPaddedRows);
                     return glu_split(ctx, a, b, GluOp::GEGLU);
                   }});
  cases.push_back({"norm", 1e-10, [](Context& ctx, test::Rng& rng) {
                     return norm(ctx, random_tensor(ctx, rng, DType::F32, {100, 6, 2, 1}, Layout::kPermuted), 1e-5f);
                   }});
  cases.push_back({"rms_norm_f16", 1e-6, [](Context& ctx, test::Rng& rng) {
                     return rms_norm(ctx, random_tensor(ctx, rng, DType::F16, {4096, 3, 1, 1}), 1e-6f);
                   }});
  cases.push_back({"soft_max_mask_alibi", 1e-10, [](Context& ctx, test::Rng& rng) {
                     Tensor* a = random_tensor(ctx, rng, DType::F32, {77, 5, 6, 1}, Layout::kContiguous, -8.0f, 8.0f);
                     Tensor* mask = random_tensor(ctx, rng, DType::F16, {77, 8, 1, 1});
                     return soft_max(ctx, a, mask, 0.3f, 8.0f);
                   }});
  for (RopeMode mode : {RopeMode::NORMAL, RopeMode::NEOX}) {
    cases.push_back({std::string("rope_") + (mode == RopeMode::NEOX ? "neox" : "normal"), 1e-10,
                     [mode](Context& ctx, test::Rng& rng) {
                       Tensor* a = random_tensor(ctx, rng, DType::F32, {64, 4, 7, 1});
                       Tensor* pos = index_tensor(ctx, {7, 1, 1, 1}, 5000, rng);
                       RopeParams p;
                       p.n_dims = 48;
                       p.mode = mode;
                       p.n_ctx_orig = 4096;
                       p.ext_factor = 0.5f;
                       p.freq_scale = 0.25f;
                       return rope(ctx, a, pos, p);
                     }});
  }
  cases.push_back({"flash_attn_gqa_mask_softcap_f16_kv", 1e-6, [](Context& ctx, test::Rng& rng) {
                     Tensor* q = random_tensor(ctx, rng, DType::F32, {64, 3, 8, 1});
                     Tensor* k = random_tensor(ctx, rng, DType::F16, {64, 150, 2, 1});
                     Tensor* v = random_tensor(ctx, rng, DType::F16, {48, 150, 2, 1});
                     Tensor* mask = random_tensor(ctx, rng, DType::F32, {150, 3, 1, 1});
                     // A fully masked first query row, and masked keys elsewhere.
                     float* m = static_cast<float*>(mask->data);
                     for (int j = 0; j < 150; ++j) m[j] = -std::numeric_limits<float>::infinity();
                     for (int j = 0; j < 150; j += 3) m[150 + j] = -std::numeric_limits<float>::infinity();
                     return flash_attn_ext(ctx, q, k, v, mask, 0.125f, 0.0f, 20.0f);
                   }});
  cases.push_back({"flash_attn_decode_gqa_bf16_kv", 1e-6, [](Context& ctx, test::Rng& rng) {
                     Tensor* q = random_tensor(ctx, rng, DType::F32, {80, 1, 8, 1});
                     Tensor* k = random_tensor(ctx, rng, DType::BF16, {80, 200, 2, 1});
                     Tensor* v = random_tensor(ctx, rng, DType::BF16, {80, 200, 2, 1});
                     return flash_attn_ext(ctx, q, k, v, nullptr, 0.1f);
                   }});
  cases.push_back({"flash_attn_alibi_permuted_kv", 1e-6, [](Context& ctx, test::Rng& rng) {
                     Tensor* q = random_tensor(ctx, rng, DType::F32, {32, 1, 6, 2}, Layout::kPermuted);
                     Tensor* k = random_tensor(ctx, rng, DType::F32, {32, 70, 6, 2}, Layout::kPermuted);
                     Tensor* v = random_tensor(ctx, rng, DType::BF16, {32, 70, 6, 2}, Layout::kTransposed);
                     Tensor* mask = random_tensor(ctx, rng, DType::F16, {70, 1, 6, 2});
                     return flash_attn_ext(ctx, q, k, v, mask, 0.2f, 4.0f);
                   }});
  cases.push_back({"get_rows_q8_0", 1e-12, [](Context& ctx, test::Rng& rng) {
                     Tensor* a = random_tensor(ctx, rng, DType::Q8_0, {64, 10, 2, 1});
                     return get_rows(ctx, a, index_tensor(ctx, {7, 2, 1, 1}, 10, rng));
                   }});
  cases.push_back({"set_rows_f16_repeated_indices", 1e-12,
                   [](Context& ctx, test::Rng& rng) {
                     Tensor* dst = random_tensor(ctx, rng, DType::F16, {40, 6, 1, 1});
                     Tensor* src = random_tensor(ctx, rng, DType::F32, {40, 9, 1, 1});
                     return set_rows(ctx, dst, src, index_tensor(ctx, {9, 1, 1, 1}, 6, rng));
                   },
                   [](Tensor* out) { return std::vector<Tensor*>{out->src[0]}; }});
  cases.push_back({"cpy_permuted_f32_to_q8_0", 1e-12,
                   [](Context& ctx, test::Rng& rng) {
                     Tensor* a = random_tensor(ctx, rng, DType::F32, {64, 3, 5, 1}, Layout::kPermuted);
                     Tensor* b = ctx.new_tensor(DType::Q8_0, {64, 3, 5, 1});
                     return cpy(ctx, a, b);
                   },
                   [](Tensor* out) { return std::vector<Tensor*>{out->src[1]}; }});
  cases.push_back({"cpy_reshaping_transposed_to_bf16", 1e-12,
                   [](Context& ctx, test::Rng& rng) {
                     Tensor* a = random_tensor(ctx, rng, DType::F16, {6, 10, 1, 1}, Layout::kTransposed);
                     Tensor* b = ctx.new_tensor(DType::BF16, {4, 15, 1, 1});
                     return cpy(ctx, a, b);
                   },
                   [](Tensor* out) { return std::vector<Tensor*>{out->src[1]}; }});
  cases.push_back({"cont_transposed_i32", 0.0, [](Context& ctx, test::Rng& rng) {
                     Tensor* a = test::new_tensor(ctx, DType::I32, {9, 13, 2, 1}, Layout::kTransposed);
                     test::fill_uniform(*a, rng, -1000.0f, 1000.0f);
                     return cont(ctx, a);
                   }});
  for (int dim = 0; dim < 3; ++dim) {
    cases.push_back({"concat_dim" + std::to_string(dim), 0.0, [dim](Context& ctx, test::Rng& rng) {
                       std::array<int64_t, 4> ne_b = {5, 4, 3, 1};
                       ne_b[size_t(dim)] = 2;
                       Tensor* a = random_tensor(ctx, rng, DType::F16, {5, 4, 3, 1}, Layout::kPermuted);
                       Tensor* b = random_tensor(ctx, rng, DType::F16, ne_b);
                       return concat(ctx, a, b, dim);
                     }});
  }
  cases.push_back({"sum_rows", 1e-12, [](Context& ctx, test::Rng& rng) {
                     return sum_rows(ctx, random_tensor(ctx, rng, DType::F32, {301, 4, 2, 1}, Layout::kPaddedRows));
                   }});
  cases.push_back({"argmax", 0.0, [](Context& ctx, test::Rng& rng) {
                     return argmax(ctx, random_tensor(ctx, rng, DType::F32, {1000, 5, 1, 1}));
                   }});
  cases.push_back({"conv_2d_strided_dilated_f16", 1e-6, [](Context& ctx, test::Rng& rng) {
                     Tensor* kernel = random_tensor(ctx, rng, DType::F16, {3, 3, 4, 5});
                     Tensor* input = random_tensor(ctx, rng, DType::F32, {17, 12, 4, 2}, Layout::kPaddedRows);
                     Conv2dParams p;
                     p.s0 = 2;
                     p.p0 = 1;
                     p.p1 = 2;
                     p.d1 = 2;
                     return conv_2d(ctx, kernel, input, p);
                   }});
  cases.push_back({"conv_2d_unit_stride", 1e-10, [](Context& ctx, test::Rng& rng) {
                     Tensor* kernel = random_tensor(ctx, rng, DType::F32, {3, 2, 3, 4});
                     Tensor* input = random_tensor(ctx, rng, DType::F32, {40, 9, 3, 1});
                     Conv2dParams p;
                     p.p0 = 1;
                     p.p1 = 1;
                     return conv_2d(ctx, kernel, input, p);
                   }});
  for (PoolOp op : {PoolOp::MAX, PoolOp::AVG}) {
    cases.push_back({op == PoolOp::MAX ? "pool_2d_max" : "pool_2d_avg", 0.0, [op](Context& ctx, test::Rng& rng) {
                       Pool2dParams p;
                       p.op = op;
                       p.k0 = 3;
                       p.s0 = 2;
                       p.p0 = 1;
                       p.p1 = 1;
                       return pool_2d(ctx, random_tensor(ctx, rng, DType::F32, {13, 11, 3, 2}, Layout::kPermuted), p);
                     }});
  }
  cases.push_back(
      {"batch_norm_axis0_and_2", 0.0, [](Context& ctx, test::Rng& rng) {
         Tensor* x = random_tensor(ctx, rng, DType::F32, {6, 5, 4, 2}, Layout::kPaddedRows);
         auto channel = [&](int64_t c, float lo, float hi) {
           return random_tensor(ctx, rng, DType::F32, {c, 1, 1, 1}, Layout::kContiguous, lo, hi);
         };
         Tensor* y =
             batch_norm(ctx, x, channel(4, -1, 1), channel(4, 0.5f, 2), channel(4, -1, 1), channel(4, -1, 1), 1e-5f);
         return batch_norm(ctx, y, channel(6, -1, 1), channel(6, 0.5f, 2), nullptr, channel(6, -1, 1), 1e-3f, 0);
       }});
  cases.push_back({"scale_bf16", 1e-5, [](Context& ctx, test::Rng& rng) {
                     return scale(ctx, random_tensor(ctx, rng, DType::BF16, {50, 3, 1, 1}), 1.5f, -0.25f);
                   }});
  return cases;
}

class CpuOps : public testing::TestWithParam<std::tuple<Isa, int>> {};

TEST_P(CpuOps, MatchReference) {
  const auto [isa, threads] = GetParam();
  const std::unique_ptr<Backend> backend = make_cpu_backend(BackendOptions{threads}, isa);
  for (const OpCase& c : op_cases()) {
    SCOPED_TRACE(c.name);
    Context ctx;
    test::Rng rng(1234);
    Tensor* out = c.build(ctx, rng);
    std::string why;
    ASSERT_TRUE(backend->supports_op(*out, &why)) << why;
    EXPECT_LE(compare_with_reference(*backend, out, c.in_place(out)), c.bound);
  }
}

INSTANTIATE_TEST_SUITE_P(IsasAndThreads, CpuOps,
                         testing::Combine(testing::ValuesIn(runnable_isas()), testing::Values(1, 3)),
                         [](const testing::TestParamInfo<std::tuple<Isa, int>>& info) {
                           return std::string(isa_name(std::get<0>(info.param))) + "_" +
                                  std::to_string(std::get<1>(info.param)) + "threads";
                         });

// Big enough that the work is split across threads and the GEMM uses several tiles and K blocks.
TEST(CpuBackend, LargeMatMulMatchesReferenceWithManyThreads) {
  const std::unique_ptr<Backend> backend = make_cpu_backend(BackendOptions{4});
  for (DType a_type : {DType::F32, DType::Q8_0, DType::Q4_0, DType::Q4_K, DType::Q6_K}) {
    Context ctx;
    test::Rng rng(99);
    const int64_t k = dtype_traits(a_type).block_size == 256 ? 768 : 544;
    Tensor* a = random_tensor(ctx, rng, a_type, {k, 300, 1, 1});
    // 130 columns take the blocked GEMM, 5 the several-token matrix-vector tiles.
    for (int64_t n : {130, 5}) {
      Tensor* b = random_tensor(ctx, rng, DType::F32, {k, n, 1, 1});
      EXPECT_LE(compare_with_reference(*backend, mul_mat(ctx, a, b)), 1e-10) << dtype_name(a_type) << " n=" << n;
    }
  }
}

// Backend::prepare_weight: a q4_0 or q8_0 matrix's interleaved copy (prepared_weights.h) is what
// decode multiplies by while it is held, in eager and graph mode alike, on every ISA; released,
// the stored rows are read again.
TEST(CpuBackend, DecodeReadsAPreparedWeightWhileItIsHeld) {
  for (DType type :
       {DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::Q8_0, DType::Q4_K, DType::Q5_K, DType::Q6_K}) {
    Context ctx;
    test::Rng rng(31);
    // 17 and 3 blocks; two full groups of 16 rows and 5
    const bool k_type = dtype_traits(type).block_size == 256;
    const int64_t kK = k_type ? 768 : 544, kRows = 37;
    Tensor* w = random_tensor(ctx, rng, type, {kK, kRows, 1, 1});
    w->flags |= kFlagParam;
    Tensor* x = random_tensor(ctx, rng, DType::F32, {kK, 1, 1, 1});
    Tensor* y = mul_mat(ctx, w, x);
    const auto result = [&] {
      return std::vector<float>(static_cast<float*>(y->data), static_cast<float*>(y->data) + kRows);
    };
    // The interleaved kernel's own bits for this matrix.
    std::vector<uint8_t> groups(interleaved_bytes(type, kK, kRows));
    interleave_rows(type, kK, kRows, w->data, w->nb[1], groups.data());
    std::vector<BlockQ8_32> xq(kK / 32);
    std::vector<BlockQ8_K> xk(kK / 256);
    quantize_row_q8_32(static_cast<const float*>(x->data), xq.data(), kK);
    if (k_type) quantize_row_q8_K(static_cast<const float*>(x->data), xk.data(), kK);
    const void* xb = k_type ? static_cast<const void*>(xk.data()) : xq.data();
    std::vector<float> interleaved(kRows);
    std::vector<int32_t> scratch(kK / 32 * 4);
    vec_kernels(Isa::SCALAR)
        .dot_interleaved_rows(type, kK, kRows, groups.data(), xb, interleaved.data(), scratch.data());
    for (Isa isa : runnable_isas()) {
      const std::unique_ptr<Backend> backend = make_cpu_backend(BackendOptions{3}, isa, InterleavedCopies::ALWAYS);
      backend->compute(Graph::build(y));
      const std::vector<float> stored = result();
      std::unique_ptr<PreparedWeight> prepared = backend->prepare_weight(*w);
      ASSERT_TRUE(prepared) << dtype_name(type);
      EXPECT_EQ(prepared->bytes(), groups.size());
      EXPECT_LE(compare_with_reference(*backend, y), 1e-6) << dtype_name(type) << " " << isa_name(isa);
      for (bool graph : {false, true}) {
        GraphModeConfig config = backend->graph_mode()->config();
        config.enabled = graph;
        backend->graph_mode()->set_config(config);
        for (int step = 0; step < 3; ++step) {  // graph mode: seen, captured, replayed
          backend->compute(Graph::build(y));
          const std::vector<float> got = result();
          for (int64_t r = 0; r < kRows; ++r) {
            ASSERT_EQ(std::bit_cast<uint32_t>(got[size_t(r)]), std::bit_cast<uint32_t>(interleaved[size_t(r)]))
                << dtype_name(type) << " " << isa_name(isa) << (graph ? " graph" : " eager") << " step " << step
                << " row " << r;
          }
        }
      }
      // The vector tables' row kernels keep 8 lanes per block (the scalar table one, as the
      // copy's): they round differently, so the copy was read, not the stored rows.
      if (isa != Isa::SCALAR) {
        EXPECT_NE(stored, interleaved) << dtype_name(type) << " " << isa_name(isa);
      }
      prepared.reset();
      GraphModeConfig config = backend->graph_mode()->config();
      config.enabled = false;
      backend->graph_mode()->set_config(config);
      backend->compute(Graph::build(y));
      EXPECT_EQ(result(), stored) << dtype_name(type) << " " << isa_name(isa) << " after the release";
    }
  }
}

// Only whole 2-D matrices of the interleaved types are copied; a weight copied twice shares one copy.
TEST(CpuBackend, PreparesOnlyWhatDecodeCanReadFaster) {
  const auto make = [] { return make_cpu_backend(BackendOptions{1}, best_isa(), InterleavedCopies::ALWAYS); };
  const std::unique_ptr<Backend> backend = make();
  Context ctx;
  test::Rng rng(32);
  EXPECT_FALSE(backend->prepare_weight(*random_tensor(ctx, rng, DType::F16, {64, 16, 1, 1})));
  EXPECT_FALSE(backend->prepare_weight(*random_tensor(ctx, rng, DType::F32, {64, 16, 1, 1})));
  EXPECT_FALSE(backend->prepare_weight(*random_tensor(ctx, rng, DType::Q4_0, {64, 16, 2, 1})));
  Tensor* w = random_tensor(ctx, rng, DType::Q8_0, {64, 20, 1, 1});
  const std::unique_ptr<PreparedWeight> first = backend->prepare_weight(*w);
  const std::unique_ptr<PreparedWeight> second = make()->prepare_weight(*w);
  ASSERT_TRUE(first && second);
  EXPECT_EQ(first->bytes(), interleaved_bytes(DType::Q8_0, 64, 20));
  EXPECT_EQ(find_interleaved(*w), find_interleaved(*w));
  ASSERT_TRUE(find_interleaved(*w));
  // A view of other rows at the same address is not the copied matrix.
  EXPECT_FALSE(find_interleaved(*view_2d(ctx, w, 64, 10, w->nb[1], 0)));
}

// A backend made for this CPU copies only where its decode reads the copy faster than the rows
// (decodes_interleaved_copies: not on Intel), and then every matrix of an interleaved type.
TEST(CpuBackend, CopiesWeightsOnlyWhereThisCpuDecodesCopiesFaster) {
  Context ctx;
  test::Rng rng(34);
  Tensor* w = random_tensor(ctx, rng, DType::Q4_0, {64, 20, 1, 1});
  EXPECT_EQ(decodes_interleaved_copies(), cpu_features().vendor != CpuVendor::INTEL);
  EXPECT_EQ(bool(make_cpu_backend(BackendOptions{1})->prepare_weight(*w)), decodes_interleaved_copies());
  EXPECT_TRUE(make_cpu_backend(BackendOptions{1}, best_isa(), InterleavedCopies::ALWAYS)->prepare_weight(*w));
}

// Backends preparing the same weight at once (each lays it out without the registry's lock) end up
// sharing one registered copy, which lives as long as any of their handles.
TEST(CpuBackend, BackendsPreparingOneWeightAtOnceShareOneCopy) {
  Context ctx;
  test::Rng rng(33);
  Tensor* w = random_tensor(ctx, rng, DType::Q4_K, {512, 100, 1, 1});
  constexpr int kThreads = 4;
  std::vector<std::unique_ptr<PreparedWeight>> handles(kThreads);
  std::vector<std::thread> threads;
  std::atomic<int> ready{0};
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      const std::unique_ptr<Backend> backend =
          make_cpu_backend(BackendOptions{1}, best_isa(), InterleavedCopies::ALWAYS);
      ready.fetch_add(1);
      while (ready.load() < kThreads) std::this_thread::yield();
      handles[size_t(i)] = backend->prepare_weight(*w);
    });
  }
  for (std::thread& t : threads) t.join();
  const InterleavedMatrix* copy = find_interleaved(*w);
  ASSERT_TRUE(copy);
  std::vector<uint8_t> expected(interleaved_bytes(DType::Q4_K, 512, 100));
  interleave_rows(DType::Q4_K, 512, 100, w->data, w->nb[1], expected.data());
  EXPECT_EQ(std::memcmp(copy->groups, expected.data(), expected.size()), 0);
  for (int i = 0; i < kThreads; ++i) {
    ASSERT_TRUE(handles[size_t(i)]);
    handles[size_t(i)].reset();
    EXPECT_EQ(find_interleaved(*w), i + 1 < kThreads ? copy : nullptr) << "after " << i + 1 << " handles dropped";
  }
}

// ---- errors ----

TEST(CpuBackend, KernelErrorOnAWorkerNamesTheNodeAndLeavesTheBackendUsable) {
  const std::unique_ptr<Backend> backend = make_cpu_backend(BackendOptions{4});
  Context ctx;
  test::Rng rng(5);
  // Enough rows that all four threads get some; the bad index is in the last row, a worker's.
  Tensor* a = random_tensor(ctx, rng, DType::F32, {4096, 8, 1, 1});
  Tensor* idx = ctx.new_tensor(DType::I32, {64});
  for (int i = 0; i < 64; ++i) static_cast<int32_t*>(idx->data)[i] = i % 8;
  static_cast<int32_t*>(idx->data)[63] = 8;
  Tensor* rows = get_rows(ctx, a, idx);
  rows->set_name("gathered");
  try {
    backend->compute(Graph::build(rows));
    FAIL() << "expected an out-of-range error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("cpu: get_rows gathered: row index 8 at idx[63,0,0]", 0), 0u) << e.what();
  }
  static_cast<int32_t*>(idx->data)[63] = -1;
  EXPECT_THROW(backend->compute(Graph::build(rows)), Error);
  static_cast<int32_t*>(idx->data)[63] = 7;
  EXPECT_LE(compare_with_reference(*backend, rows), 0.0);
}

TEST(CpuBackend, ArgmaxSkipsNaNOnEveryIsa) {
  // A NaN anywhere must neither win nor hide the maximum, whatever lane it falls in.
  Context ctx;
  Tensor* a = ctx.new_tensor(DType::F32, {40, 6});
  float* x = static_cast<float*>(a->data);
  std::fill_n(x, 240, 1.0f);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const int nan_at[6] = {31, 39, 0, 7, 8, 20}, max_at[6] = {7, 7, 7, 8, 7, 33};
  for (int r = 0; r < 6; ++r) {
    x[r * 40 + max_at[r]] = 5.0f;
    x[r * 40 + nan_at[r]] = nan;
  }
  x[5 * 40 + 34] = 5.0f;  // a tie: the first one wins
  Tensor* best = argmax(ctx, a);
  for (Isa isa : runnable_isas()) {
    make_cpu_backend(BackendOptions{2}, isa)->compute(Graph::build(best));
    for (int r = 0; r < 6; ++r)
      EXPECT_EQ(static_cast<int32_t*>(best->data)[r], max_at[r]) << "row " << r << " isa " << int(isa);
  }
  reference::compute_graph(Graph::build(best));
  for (int r = 0; r < 6; ++r) EXPECT_EQ(static_cast<int32_t*>(best->data)[r], max_at[r]) << "reference, row " << r;
  std::fill_n(x, 40, nan);
  for (Isa isa : runnable_isas()) {
    make_cpu_backend(BackendOptions{1}, isa)->compute(Graph::build(best));
    EXPECT_EQ(static_cast<int32_t*>(best->data)[0], 0) << "a row of NaNs, isa " << int(isa);
  }
}

TEST(CpuBackend, RmsNormOfHugeValuesOnEveryIsa) {
  // 128 values near 1e19: their squares overflow an f32 sum, not the double the reference uses.
  Context ctx;
  Tensor* a = ctx.new_tensor(DType::F32, {128, 2});
  float* x = static_cast<float*>(a->data);
  for (int i = 0; i < 256; ++i) x[i] = (i % 3 == 0 ? -1.0f : 1.0f) * 1e19f * float(1 + i % 5);
  Tensor* normed = rms_norm(ctx, a, 1e-5f);
  for (Isa isa : runnable_isas()) {
    EXPECT_LE(compare_with_reference(*make_cpu_backend(BackendOptions{1}, isa), normed), 1e-12) << "isa " << int(isa);
  }
}

TEST(CpuBackend, QuantizedRowsThatAllAliasOneRow) {
  // A view with nb1 = 0 (every row the same memory) is valid; the q8_0 matrix-vector path once
  // divided by that stride.
  const std::unique_ptr<Backend> backend = make_cpu_backend(BackendOptions{2});
  for (DType type : {DType::Q8_0, DType::Q4_0, DType::Q4_K, DType::Q6_K}) {
    Context ctx;
    test::Rng rng(8);
    Tensor* w = random_tensor(ctx, rng, type, {256, 1, 1, 1});
    Tensor* rows = view_2d(ctx, w, 256, 5, 0, 0);
    Tensor* x = random_tensor(ctx, rng, DType::F32, {256, 1, 1, 1});
    EXPECT_LE(compare_with_reference(*backend, mul_mat(ctx, rows, x)), 1e-6) << dtype_name(type);
  }
}

TEST(CpuBackend, SetRowsRejectsOutOfRangeIndices) {
  const std::unique_ptr<Backend> backend = make_cpu_backend(BackendOptions{2});
  Context ctx;
  test::Rng rng(6);
  Tensor* dst = random_tensor(ctx, rng, DType::F32, {16, 4, 1, 1});
  Tensor* src = random_tensor(ctx, rng, DType::F32, {16, 2, 1, 1});
  Tensor* idx = ctx.new_tensor(DType::I32, {2});
  static_cast<int32_t*>(idx->data)[0] = 1;
  static_cast<int32_t*>(idx->data)[1] = 4;
  EXPECT_THROW(backend->compute(Graph::build(set_rows(ctx, dst, src, idx))), Error);
}

TEST(CpuBackend, RefusesGraphsWithoutDataOrUnsupportedNodes) {
  const std::unique_ptr<Backend> backend = make_cpu_backend(BackendOptions{1});
  Context ctx(ContextOptions{.no_alloc = true});
  Tensor* a = ctx.new_tensor(DType::F32, {8, 2});
  Tensor* out = relu(ctx, a);
  EXPECT_THROW(backend->compute(Graph::build(out)), Error);

  Context alloc;
  Tensor* x = alloc.new_tensor(DType::F32, {8, 2});
  Tensor* y = alloc.new_tensor(DType::F32, {8, 2});
  Tensor* bad = add(alloc, x, y);
  bad->src[1]->type = DType::I32;  // a hand-built node that no builder allows
  std::string why;
  EXPECT_FALSE(backend->supports_op(*bad, &why));
  EXPECT_FALSE(why.empty());
  try {
    backend->compute(Graph::build(bad));
    FAIL() << "expected the graph to be refused";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("cpu: ", 0), 0u) << e.what();
  }
}

TEST(CpuBackend, RejectsIsasThisCpuCannotRun) {
  if (best_isa() == Isa::AMX) GTEST_SKIP() << "every ISA runs here";
  EXPECT_THROW(make_cpu_backend(BackendOptions{1}, Isa::AMX), Error);
}

}  // namespace
}  // namespace tg::cpu
