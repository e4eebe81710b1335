// `tilegraph-bench gemm`, fused section: D = gelu(A · B + bias[col]), f32, A row-major, B
// row-major (square-ish shapes) or stored N x K (the LLM-ish shape: a linear layer's weight),
// tanh gelu everywhere:
//   fused     the string "D = gelu(acc + bias[col])" compiled into one GEMM kernel
//             (evg::frontend::CompiledGemm): the epilogue runs on each block while it is in cache
//   gemm      our plain GEMM alone (what the epilogue adds to it)
//   unfused   our plain GEMM, then a bias pass and a gelu pass over D (the backend's row kernels,
//             split over the same threads): what running MUL_MAT, ADD, GELU one by one costs
//   onednn    oneDNN's matmul with a bias and an eltwise_gelu_tanh post-op
//   torch     gelu(addmm(bias, A, B), approximate="tanh") in Debian's /usr/bin/python3 (torch
//             1.13), run by bench/peers/torch_addmm_gelu.py as a child process with
//             torch.set_num_threads(threads); if it cannot run, the table says why
// Each round times every peer once, in turn (the torch child included), starting with another
// peer each round, with pauses for idle workers to sleep on 2 threads; figures are medians over
// rounds, ratios medians of per-round ratios. Results are checked against the unfused ones.
#include "gemm_fused.h"

#include <omp.h>
#include <stdlib.h>

#include <oneapi/dnnl/dnnl.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gemm.h"
#include "gemm_buffers.h"
#include "launcher.h"
#include "measure.h"
#include "peer_process.h"
#include "thread_pool.h"
#include "tilegraph/core/error.h"
#include "tilegraph/evg/frontend/compiled_gemm.h"
#include "tilegraph/jit/compiler.h"
#include "vec.h"

namespace tg::bench {

namespace {

using evg::frontend::Binding;
using evg::frontend::GemmInput;
using nlohmann::json;

struct FusedProblem {
  int64_t m, n, k;
  bool weights_transposed;  // B stored N x K
};

struct FusedRow {
  FusedProblem p;
  int threads;
  double fused_s, gemm_s, unfused_s, onednn_s, torch_s = 0;  // medians over rounds
  double unfused_over_fused, onednn_over_fused, torch_over_fused = 0, fused_over_gemm;
  double diff_fused = 0, diff_onednn = 0;  // against the unfused result
};

// A JIT compiler with a cache of its own in a temporary directory, so that the first compile is
// cold (its time is reported) and nothing is left behind.
class PrivateCompiler {
 public:
  PrivateCompiler() {
    char pattern[] = "/tmp/tg_bench_fused_XXXXXX";
    if (!mkdtemp(pattern)) throw Error("gemm bench: mkdtemp failed");
    dir_ = pattern;
    jit::Config config = jit::Config::from_env();
    config.cache_dir = dir_ / "cache";
    compiler_ = std::make_unique<jit::Compiler>(config);
  }
  ~PrivateCompiler() {
    compiler_.reset();
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  jit::Compiler& get() { return *compiler_; }

 private:
  std::filesystem::path dir_;
  std::unique_ptr<jit::Compiler> compiler_;
};

// oneDNN's matmul with bias and gelu_tanh as post-op, its primitive created for the current
// OpenMP thread count.
class OneDnnFusedMatmul {
 public:
  OneDnnFusedMatmul(const FusedProblem& p, const float* a, const float* b, const float* bias, float* d)
      : engine_(dnnl::engine::kind::cpu, 0), stream_(engine_) {
    using dims = dnnl::memory::dims;
    using dt = dnnl::memory::data_type;
    const dnnl::memory::desc a_md({p.m, p.k}, dt::f32, dims{p.k, 1});
    const dnnl::memory::desc b_md({p.k, p.n}, dt::f32, p.weights_transposed ? dims{1, p.k} : dims{p.n, 1});
    const dnnl::memory::desc bias_md({1, p.n}, dt::f32, dims{p.n, 1});
    const dnnl::memory::desc d_md({p.m, p.n}, dt::f32, dims{p.n, 1});
    dnnl::post_ops ops;
    ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_gelu_tanh, 0.0f, 0.0f);
    dnnl::primitive_attr attr;
    attr.set_post_ops(ops);
    const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_md, b_md, bias_md, d_md), attr, engine_);
    matmul_ = dnnl::matmul(pd);
    a_ = dnnl::memory(a_md, engine_, const_cast<float*>(a));
    b_ = dnnl::memory(b_md, engine_, const_cast<float*>(b));
    bias_ = dnnl::memory(bias_md, engine_, const_cast<float*>(bias));
    d_ = dnnl::memory(d_md, engine_, d);
  }
  void run() {
    matmul_.execute(stream_, {{DNNL_ARG_SRC, a_}, {DNNL_ARG_WEIGHTS, b_}, {DNNL_ARG_BIAS, bias_}, {DNNL_ARG_DST, d_}});
    stream_.wait();
  }

 private:
  dnnl::engine engine_;
  dnnl::stream stream_;
  dnnl::matmul matmul_;
  dnnl::memory a_, b_, bias_, d_;
};

std::string torch_script() { return std::string(TG_BENCH_PEERS_DIR) + "/torch_addmm_gelu.py"; }

FusedRow run_fused_problem(const FusedProblem& p, int threads, int rounds, const evg::frontend::CompiledGemm& fused,
                           PeerProcess& torch) {
  AlignedFloats a(size_t(p.m * p.k)), b(size_t(p.k * p.n)), bias(size_t(p.n));
  AlignedFloats d_fused(size_t(p.m * p.n)), d_gemm(size_t(p.m * p.n)), d_unfused(size_t(p.m * p.n)),
      d_onednn(size_t(p.m * p.n));
  fill_random(a, 1);
  fill_random(b, 2);
  fill_random(bias, 3);

  cpu::ThreadPool pool(threads);
  const evg::Launcher launcher = cpu::make_launcher(pool);
  const cpu::GemmKernels& kernels = cpu::gemm_kernels(cpu::best_isa());
  const cpu::VecKernels& vec = cpu::vec_kernels(cpu::best_isa());
  const evg::GemmShape shape{p.m, p.n, p.k};
  const int64_t ldb = p.weights_transposed ? p.k : p.n;
  const evg::MatrixOperand op_a{a.data, evg::ElementType::F32, p.k, false};
  const evg::MatrixOperand op_b{b.data, evg::ElementType::F32, ldb, p.weights_transposed};
  const size_t workspace_bytes =
      kernels.plan({shape, op_a, op_b}, threads, cpu::gemm_tuning(op_b.type)).workspace_bytes;
  AlignedFloats workspace((workspace_bytes + sizeof(float) - 1) / sizeof(float));
  // Like the fused kernel, our GEMM makes its plan in every call.
  auto gemm = [&](float* d) {
    kernels.gemm(kernels.plan({shape, op_a, op_b}, threads, cpu::gemm_tuning(op_b.type)), op_a, op_b, d, p.n, launcher,
                 workspace.data);
  };

  const GemmInput in_a = GemmInput::row_major(a.data, p.m, p.k);
  const GemmInput in_b =
      p.weights_transposed ? GemmInput::col_major(b.data, p.k, p.n) : GemmInput::row_major(b.data, p.k, p.n);
  const evg::frontend::Bindings bindings{{"bias", Binding::vector(bias.data)},
                                         {"D", Binding::matrix(d_fused.data, p.n)}};
  auto run_fused = [&] { fused.run(in_a, in_b, bindings, launcher); };
  auto run_gemm = [&] { gemm(d_gemm.data); };
  // Row passes over D, split into contiguous row ranges per thread, as the backend splits them.
  auto rows_pass = [&](const std::function<void(float*)>& row_fn) {
    pool.parallel_for(threads, [&](int ith, int nth) {
      const int64_t begin = p.m * ith / nth, end = p.m * (ith + 1) / nth;
      for (int64_t i = begin; i < end; ++i) row_fn(d_unfused.data + i * p.n);
    });
  };
  auto run_unfused = [&] {
    gemm(d_unfused.data);
    rows_pass([&](float* row) { vec.binary(cpu::BinaryOp::ADD, p.n, row, row, bias.data); });
    rows_pass([&](float* row) { vec.unary(UnaryOp::GELU, p.n, row, row); });
  };
  omp_set_num_threads(threads);
  OneDnnFusedMatmul onednn(p, a.data, b.data, bias.data, d_onednn.data);
  auto run_onednn = [&] { onednn.run(); };

  const std::string name = "fused/" + std::to_string(p.m) + "x" + std::to_string(p.n) + "x" + std::to_string(p.k) +
                           "/" + std::to_string(threads);
  constexpr double kMinSeconds = 0.1;
  auto settle = [&] {
    if (threads > 1) std::this_thread::sleep_for(std::chrono::duration<double>(kIdleWorkersSettle_s));
  };
  const std::vector<std::function<void()>> peers = {run_fused, run_gemm, run_unfused, run_onednn};
  std::vector<std::vector<double>> times(peers.size());
  std::vector<double> torch_times;
  auto time_torch = [&] {
    if (!torch.available()) return;
    const json reply = torch.request({{"m", p.m},
                                      {"n", p.n},
                                      {"k", p.k},
                                      {"threads", threads},
                                      {"b_transposed", p.weights_transposed},
                                      {"min_seconds", kMinSeconds}});
    if (reply.contains("seconds")) torch_times.push_back(reply["seconds"].get<double>());
  };
  // Each round starts with another peer (torch's turn is index peers.size()), so that none always
  // follows the same one: on 2 threads whatever ran just before can still hold a core.
  const size_t turns = peers.size() + 1;
  for (int r = 0; r < rounds; ++r) {
    for (size_t t = 0; t < turns; ++t) {
      const size_t i = (t + size_t(r)) % turns;
      settle();
      if (i == peers.size()) {
        time_torch();
      } else {
        times[i].push_back(measure(name + "/" + std::to_string(i), peers[i], 1, kMinSeconds).median_s);
      }
    }
  }
  FusedRow row{p, threads, median_of(times[0]), median_of(times[1]), median_of(times[2]), median_of(times[3])};
  row.unfused_over_fused = median_ratio(times[2], times[0]);
  row.onednn_over_fused = median_ratio(times[3], times[0]);
  row.fused_over_gemm = median_ratio(times[0], times[1]);
  if (torch_times.size() == size_t(rounds)) {
    row.torch_s = median_of(torch_times);
    row.torch_over_fused = median_ratio(torch_times, times[0]);
  }
  row.diff_fused = max_relative_difference(d_fused, d_unfused);
  row.diff_onednn = max_relative_difference(d_onednn, d_unfused);
  return row;
}

double gflops(const FusedProblem& p, double s) {
  return s > 0 ? 2.0 * double(p.m) * double(p.n) * double(p.k) / s / 1e9 : 0;
}

// tanh gelu in different approximations (ours, oneDNN's) on f32 sums of up to 4096 terms.
constexpr double kMaxDifference = 1e-4;

void print_row(const FusedRow& r) {
  const bool bad = r.diff_fused > kMaxDifference || r.diff_onednn > kMaxDifference;
  std::printf("%5lld %6lld %5lld %3d %8.1f %8.1f %8.1f %8.1f", (long long)r.p.m, (long long)r.p.n, (long long)r.p.k,
              r.threads, gflops(r.p, r.fused_s), gflops(r.p, r.gemm_s), gflops(r.p, r.unfused_s),
              gflops(r.p, r.onednn_s));
  if (r.torch_s > 0) {
    std::printf(" %8.1f", gflops(r.p, r.torch_s));
  } else {
    std::printf(" %8s", "-");
  }
  std::printf(" %8.2f %8.2f", r.unfused_over_fused, r.onednn_over_fused);
  if (r.torch_s > 0) {
    std::printf(" %8.2f", r.torch_over_fused);
  } else {
    std::printf(" %8s", "-");
  }
  std::printf(" %8.2f  %.1e%s\n", r.fused_over_gemm, std::max(r.diff_fused, r.diff_onednn), bad ? " MISMATCH" : "");
  std::fflush(stdout);
}

}  // namespace

FusedSection run_fused_gemm_section(int rounds, bool quiet) {
  std::vector<FusedProblem> problems;
  for (int64_t n : {512, 1024, 2048}) {
    for (int64_t k : {64, 256, 512}) problems.push_back({n, n, k, false});
  }
  // A BERT-base FFN's first layer on 256 tokens: X (256 x 768) · W1ᵀ (W1 stored 3072 x 768) + b, gelu.
  problems.push_back({256, 3072, 768, true});

  PrivateCompiler compiler;
  evg::frontend::Signature sig;
  sig.input("bias", evg::frontend::OperandKind::kRowVector).output("D");
  evg::frontend::CompileOptions options;
  options.compiler = &compiler.get();
  const auto compile_start = std::chrono::steady_clock::now();
  const evg::frontend::CompiledGemm fused("D = gelu(acc + bias[col])", sig, options);
  const double compile_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - compile_start).count();

  PeerProcess torch({"/usr/bin/python3", torch_script()});
  const std::string torch_status = torch.available()
                                       ? "torch " + torch.greeting().value("torch", std::string("?")) +
                                             " (BLAS: " + torch.greeting().value("blas", std::string("?")) + ")"
                                       : "torch unavailable: " + torch.error();
  if (!quiet) {
    std::printf(
        "\nfused: D = gelu(A B + bias[col]), f32, tanh gelu; our kernel from the string "
        "\"D = gelu(acc + bias[col])\"\n(%d lanes, cold JIT compile %.1f s); %s\n",
        fused.lanes(), compile_s, torch_status.c_str());
    std::printf(
        "GFLOP/s (medians of %d rounds); x/fused = median of per-round time ratios (> 1: fused faster);\n"
        "fused/gemm: the fused kernel's time over our plain GEMM's; diff against the unfused result\n",
        rounds);
    std::printf("%5s %6s %5s %3s %8s %8s %8s %8s %8s %8s %8s %8s %8s  %s\n", "M", "N", "K", "thr", "fused", "gemm",
                "unfused", "onednn", "torch", "unf/fus", "dnn/fus", "trc/fus", "fus/gemm", "diff");
  }
  std::vector<FusedRow> rows;
  for (int threads : {1, 2}) {
    for (const FusedProblem& p : problems) {
      rows.push_back(run_fused_problem(p, threads, rounds, fused, torch));
      if (!quiet) print_row(rows.back());
    }
  }

  FusedSection section;
  double worst_unfused = 1e9, worst_onednn = 1e9;
  for (const FusedRow& r : rows) {
    if (r.p.k <= 512) worst_unfused = std::min(worst_unfused, r.unfused_over_fused);
    worst_onednn = std::min(worst_onednn, r.onednn_over_fused);
  }
  section.targets.push_back({"fused GEMM+bias+gelu >= 1.2x unfused (K <= 512)",
                             fmt("worst %.2fx the unfused passes' speed", worst_unfused), worst_unfused >= 1.2});
  section.targets.push_back({"fused GEMM+bias+gelu >= 1.0x oneDNN post-ops",
                             fmt("worst %.2fx oneDNN's speed", worst_onednn), worst_onednn >= 1.0});

  json j_rows = json::array();
  for (const FusedRow& r : rows) {
    json j = {{"m", r.p.m},
              {"n", r.p.n},
              {"k", r.p.k},
              {"weights_transposed", r.p.weights_transposed},
              {"threads", r.threads},
              {"fused_s", r.fused_s},
              {"gemm_s", r.gemm_s},
              {"unfused_s", r.unfused_s},
              {"onednn_s", r.onednn_s},
              {"unfused_over_fused", r.unfused_over_fused},
              {"onednn_over_fused", r.onednn_over_fused},
              {"fused_over_gemm", r.fused_over_gemm},
              {"max_difference_vs_unfused", std::max(r.diff_fused, r.diff_onednn)}};
    if (r.torch_s > 0) {
      j["torch_s"] = r.torch_s;
      j["torch_over_fused"] = r.torch_over_fused;
    }
    j_rows.push_back(j);
  }
  section.json = {{"epilogue", "D = gelu(acc + bias[col])"},
                  {"lanes", fused.lanes()},
                  {"cold_compile_s", compile_s},
                  {"torch", torch_status},
                  {"rows", j_rows}};
  return section;
}

}  // namespace tg::bench
