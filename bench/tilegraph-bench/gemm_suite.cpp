// `tilegraph-bench gemm`: the CPU GEMM (src/cpu/gemm.h, on the best ISA of this machine) against
// OpenBLAS and oneDNN's matmul, all measured in the same run:
//   square  f32 D = A · B, A and B row-major, n = 256 .. 4096
//   llm     f32 D (M x N) = X (M x K) · Wᵀ with the weight W stored N x K (row-major, K contiguous,
//           as a model stores it), M = 1, 8, 64, 512 and N x K = 4096 x 4096, 11008 x 4096;
//           M = 1 is a matrix-vector product (OpenBLAS: sgemv), bound by reading W once, and is
//           also reported against the memory-bandwidth bound (W's bytes / read bandwidth measured
//           here before each round).
// each on 1 and 2 threads. OpenBLAS runs with OPENBLAS_CORETYPE=SkylakeX on CPUs with AVX-512,
// which it reads when it is loaded, before main(): main.cpp sets it and re-executes the program
// (see there); elsewhere with the core it detects, printed in the header.
//
// Times are medians over rounds; each round times every library once, in turn, so that they see
// the same load on this shared machine, and ratios are medians of the per-round ratios. Between
// libraries on 2 threads the program pauses long enough for the previous library's idle workers
// (OpenBLAS's spin for up to ~0.1 s) to go to sleep. Every result is checked against OpenBLAS's.
//
// The fused section (GEMM + bias + gelu against separate passes, oneDNN post-ops and torch) is
// gemm_fused.cpp.
#include <cblas.h>
#include <omp.h>

#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "bandwidth.h"
#include "common/cli_checks.h"
#include "gemm.h"
#include "gemm_buffers.h"
#include "gemm_fused.h"
#include "launcher.h"
#include "measure.h"
#include "suites.h"
#include "targets.h"
#include "thread_pool.h"
#include "tilegraph/cpu/cpu_backend.h"
#include "vec.h"

namespace tg::bench {

namespace {

using nlohmann::json;

struct Problem {
  const char* section;  // "square" or "llm"
  int64_t m, n, k;
  bool weights_transposed;  // B stored N x K (column-major K x N)
};

struct Row {
  Problem p;
  int threads;
  double ours_s, openblas_s, onednn_s;  // medians over rounds
  double vs_openblas, vs_onednn;        // median of per-round (their time / our time)
  // 1 thread: the same ratios from the calling thread's CPU time, which leaves out the time the
  // process waited for a core (every library runs on the calling thread alone).
  double cpu_vs_openblas = 0, cpu_vs_onednn = 0;
  double bandwidth = 0, bound_s = 0, bound_eff = 0;  // M = 1 only
  double diff_openblas = 0, diff_onednn = 0;         // max |difference| / max |OpenBLAS|
};

// oneDNN's f32 matmul on the same buffers, its primitive created for the current thread count.
class OneDnnMatmul {
 public:
  OneDnnMatmul(const Problem& p, const float* a, const float* b, float* d)
      : engine_(dnnl::engine::kind::cpu, 0), stream_(engine_) {
    using dims = dnnl::memory::dims;
    using dt = dnnl::memory::data_type;
    const dnnl::memory::desc a_md({p.m, p.k}, dt::f32, dims{p.k, 1});
    const dnnl::memory::desc b_md({p.k, p.n}, dt::f32, p.weights_transposed ? dims{1, p.k} : dims{p.n, 1});
    const dnnl::memory::desc d_md({p.m, p.n}, dt::f32, dims{p.n, 1});
    const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_md, b_md, d_md), engine_);
    matmul_ = dnnl::matmul(pd);
    a_ = dnnl::memory(a_md, engine_, const_cast<float*>(a));
    b_ = dnnl::memory(b_md, engine_, const_cast<float*>(b));
    d_ = dnnl::memory(d_md, engine_, d);
  }
  void run() {
    matmul_.execute(stream_, {{DNNL_ARG_SRC, a_}, {DNNL_ARG_WEIGHTS, b_}, {DNNL_ARG_DST, d_}});
    stream_.wait();
  }

 private:
  dnnl::engine engine_;
  dnnl::stream stream_;
  dnnl::matmul matmul_;
  dnnl::memory a_, b_, d_;
};

Row run_problem(const Problem& p, int threads, int rounds, const ReadBandwidth& bandwidth_probe) {
  AlignedFloats a(size_t(p.m * p.k)), b(size_t(p.k * p.n));
  AlignedFloats d_ours(size_t(p.m * p.n)), d_openblas(size_t(p.m * p.n)), d_onednn(size_t(p.m * p.n));
  fill_random(a, 1);
  fill_random(b, 2);

  cpu::ThreadPool pool(threads);
  const evg::Launcher launcher = cpu::make_launcher(pool);
  const cpu::GemmKernels& kernels = cpu::gemm_kernels(cpu::best_isa());
  const evg::GemmShape shape{p.m, p.n, p.k};
  const evg::MatrixOperand op_a{a.data, evg::ElementType::F32, p.k, false};
  const evg::MatrixOperand op_b{b.data, evg::ElementType::F32, p.weights_transposed ? p.k : p.n, p.weights_transposed};
  const size_t workspace_bytes =
      kernels.plan({shape, op_a, op_b}, threads, cpu::gemm_tuning(op_b.type)).workspace_bytes;
  AlignedFloats workspace((workspace_bytes + sizeof(float) - 1) / sizeof(float));
  // The plan is made in every call, as the peers do their set-up in theirs.
  auto ours = [&] {
    kernels.gemm(kernels.plan({shape, op_a, op_b}, threads, cpu::gemm_tuning(op_b.type)), op_a, op_b, d_ours.data, p.n,
                 launcher, workspace.data);
  };

  openblas_set_num_threads(threads);
  auto openblas = [&] {
    if (p.m == 1 && p.weights_transposed) {
      cblas_sgemv(CblasRowMajor, CblasNoTrans, blasint(p.n), blasint(p.k), 1.0f, b.data, blasint(p.k), a.data, 1, 0.0f,
                  d_openblas.data, 1);
    } else {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, p.weights_transposed ? CblasTrans : CblasNoTrans, blasint(p.m),
                  blasint(p.n), blasint(p.k), 1.0f, a.data, blasint(p.k), b.data,
                  blasint(p.weights_transposed ? p.k : p.n), 0.0f, d_openblas.data, blasint(p.n));
    }
  };

  omp_set_num_threads(threads);
  OneDnnMatmul onednn(p, a.data, b.data, d_onednn.data);
  auto run_onednn = [&] { onednn.run(); };

  const std::string name = std::string(p.section) + "/" + std::to_string(p.m) + "x" + std::to_string(p.n) + "x" +
                           std::to_string(p.k) + "/" + std::to_string(threads);
  const double min_s = 0.1;
  std::vector<double> t_ours, t_openblas, t_onednn, bandwidths, c_ours, c_openblas, c_onednn;
  auto settle = [&] {
    if (threads > 1) std::this_thread::sleep_for(std::chrono::duration<double>(kIdleWorkersSettle_s));
  };
  auto time = [&](const std::string& what, const std::function<void()>& fn, std::vector<double>& wall,
                  std::vector<double>& cpu) {
    settle();
    const Timing t = measure(name + "/" + what, fn, 1, min_s);
    wall.push_back(t.median_s);
    cpu.push_back(t.cpu_median_s);
  };
  for (int r = 0; r < rounds; ++r) {
    if (p.m == 1) {
      settle();
      bandwidths.push_back(bandwidth_probe.measure(threads, 1));
    }
    time("ours", ours, t_ours, c_ours);
    time("openblas", openblas, t_openblas, c_openblas);
    time("onednn", run_onednn, t_onednn, c_onednn);
  }
  auto ratio = [&](const std::vector<double>& theirs, const std::vector<double>& mine) {
    std::vector<double> r;
    for (size_t i = 0; i < mine.size(); ++i) r.push_back(theirs[i] / mine[i]);
    return median_of(r);
  };

  Row row{p,
          threads,
          median_of(t_ours),
          median_of(t_openblas),
          median_of(t_onednn),
          ratio(t_openblas, t_ours),
          ratio(t_onednn, t_ours)};
  if (threads == 1) {
    row.cpu_vs_openblas = ratio(c_openblas, c_ours);
    row.cpu_vs_onednn = ratio(c_onednn, c_ours);
  }
  std::vector<double> effs;
  if (p.m == 1) {
    const double weight_bytes = double(p.n * p.k) * sizeof(float);
    for (int r = 0; r < rounds; ++r) effs.push_back(weight_bytes / bandwidths[size_t(r)] / t_ours[size_t(r)]);
    row.bandwidth = median_of(bandwidths);
    row.bound_s = weight_bytes / row.bandwidth;
    row.bound_eff = median_of(effs);
  }
  row.diff_openblas = max_relative_difference(d_ours, d_openblas);
  row.diff_onednn = max_relative_difference(d_onednn, d_openblas);
  return row;
}

double gflops(const Problem& p, double s) { return 2.0 * double(p.m) * double(p.n) * double(p.k) / s / 1e9; }

// Results differing from OpenBLAS's by more than f32 rounding over K terms explains.
constexpr double kMaxDifference = 1e-4;

void print_row(const Row& r) {
  const bool bad = r.diff_openblas > kMaxDifference || r.diff_onednn > kMaxDifference;
  std::printf("%5lld %6lld %6lld %3d %9.1f %9.1f %9.1f %8.2f %8.2f", (long long)r.p.m, (long long)r.p.n,
              (long long)r.p.k, r.threads, gflops(r.p, r.ours_s), gflops(r.p, r.openblas_s), gflops(r.p, r.onednn_s),
              r.vs_openblas, r.vs_onednn);
  if (r.threads == 1) {
    std::printf(" %8.2f %8.2f", r.cpu_vs_openblas, r.cpu_vs_onednn);
  } else {
    std::printf(" %8s %8s", "", "");
  }
  if (r.p.m == 1) {
    std::printf(" %7.2f %7.2f %6.1f%%", double(r.p.n * r.p.k) * sizeof(float) / r.ours_s / 1e9, r.bandwidth / 1e9,
                100 * r.bound_eff);
  } else {
    std::printf(" %7s %7s %7s", "", "", "");
  }
  std::printf("  %.1e%s\n", std::max(r.diff_openblas, r.diff_onednn), bad ? " MISMATCH" : "");
  std::fflush(stdout);
}

}  // namespace

void add_gemm_suite(CLI::App& app) {
  auto json_out = std::make_shared<bool>(false);
  auto only = std::make_shared<std::string>();
  auto rounds = std::make_shared<int>(5);
  auto* cmd = app.add_subcommand(
      "gemm", "f32 GEMM against OpenBLAS and oneDNN: square sizes, LLM shapes, GEMM + bias + gelu fused");
  cmd->add_flag("--json", *json_out, std::string("Print one JSON object instead of the tables"));
  cmd->add_option("--only", *only, "Run one section: square, llm or fused")
      ->check(CLI::IsMember({"square", "llm", "fused"}));
  cmd->add_option("--rounds", *rounds, "Rounds per figure (medians; 4096-sized problems run at most 3)")
      ->check(tg::cli::integer_in(1, 100))
      ->capture_default_str();
  cmd->callback([json_out, only, rounds] {
    const bool quiet = *json_out;
    std::vector<Problem> problems;
    if (only->empty() || *only == "square") {
      for (int64_t n : {256, 512, 1024, 2048, 4096}) problems.push_back({"square", n, n, n, false});
    }
    if (only->empty() || *only == "llm") {
      for (int64_t n : {4096, 11008}) {
        for (int64_t m : {1, 8, 64, 512}) problems.push_back({"llm", m, n, 4096, true});
      }
    }
    const cpu::GemmKernels& kernels = cpu::gemm_kernels(cpu::best_isa());
    const char* corename = openblas_get_corename();
    json out = {{"suite", "gemm"},
                {"isa", std::string(cpu::isa_name(kernels.isa))},
                {"micro_tile", std::to_string(kernels.tile_rows) + "x" + std::to_string(kernels.tile_cols)},
                {"openblas_core", corename ? corename : "?"},
                {"onednn_version", std::to_string(dnnl_version()->major) + "." + std::to_string(dnnl_version()->minor) +
                                       "." + std::to_string(dnnl_version()->patch)}};

    const ReadBandwidth bandwidth_probe;
    const double bw1 = bandwidth_probe.measure(1, 7);
    const double bw2 = bandwidth_probe.measure(2, 7);
    out["read_bandwidth_gbs"] = {{"1t", bw1 / 1e9}, {"2t", bw2 / 1e9}};
    if (!quiet) {
      std::printf("ours: %s, micro tile %dx%d; OpenBLAS core %s (OPENBLAS_CORETYPE=%s); oneDNN %s\n",
                  std::string(cpu::isa_name(kernels.isa)).c_str(), kernels.tile_rows, kernels.tile_cols,
                  corename ? corename : "?",
                  std::getenv("OPENBLAS_CORETYPE") ? std::getenv("OPENBLAS_CORETYPE") : "unset",
                  out["onednn_version"].get<std::string>().c_str());
      std::printf("memory read bandwidth (%s, median of 7): 1t %.2f GB/s, 2t %.2f GB/s\n\n",
                  bandwidth_probe.describe().c_str(), bw1 / 1e9, bw2 / 1e9);
      std::printf(
          "GFLOP/s, medians of %d rounds (3 at 4096); x/ours = median of per-round wall-time ratios (> 1:\n"
          "ours faster); x-cpu: the same from the calling thread's CPU time (1 thread: leaves out waits for a\n"
          "core); M = 1: GB/s of W read, read bandwidth before each round, %% of the bandwidth bound;\n"
          "diff = max |difference| / max |value| against OpenBLAS.\n",
          *rounds);
    }

    std::vector<Row> rows;
    const char* section = "";
    for (int threads : {1, 2}) {
      for (const Problem& p : problems) {
        if (!quiet && std::string(section) != p.section) {
          section = p.section;
          std::printf("\n%s\n", p.section == std::string("square") ? "square: D = A B, A and B row-major"
                                                                   : "llm: D = X Wt, W stored N x K");
          std::printf("%5s %6s %6s %3s %9s %9s %9s %8s %8s %8s %8s %7s %7s %7s  %s\n", "M", "N", "K", "thr", "ours",
                      "openblas", "onednn", "ob/ours", "dnn/ours", "ob-cpu", "dnn-cpu", "GB/s", "bw", "bound", "diff");
        }
        const int r = std::max(p.m, p.n) >= 4096 && p.m >= 2048 ? std::min(*rounds, 3) : *rounds;
        rows.push_back(run_problem(p, threads, r, bandwidth_probe));
        if (!quiet) print_row(rows.back());
      }
      section = "";
    }

    FusedSection fused;
    if (only->empty() || *only == "fused") fused = run_fused_gemm_section(*rounds, quiet);

    std::vector<Target> targets;
    double worst_square = 1e9, worst_square_cpu = 1e9, worst_gemv = 1e9;
    bool any_square = false, any_gemv = false;
    for (const Row& r : rows) {
      if (r.p.section == std::string("square") && r.p.m >= 2048) {
        worst_square = std::min(worst_square, r.vs_openblas);
        if (r.threads == 1) worst_square_cpu = std::min(worst_square_cpu, r.cpu_vs_openblas);
        any_square = true;
      }
      if (r.p.m == 1) {
        worst_gemv = std::min(worst_gemv, r.bound_eff);
        any_gemv = true;
      }
    }
    if (any_square) {
      targets.push_back({"square f32 (2048, 4096) >= 0.95x OpenBLAS",
                         fmt("worst %.2fx OpenBLAS's speed (1t/2t wall)", worst_square), worst_square >= 0.95});
      targets.push_back({"  the same, 1 thread, CPU time", fmt("worst %.2fx OpenBLAS's speed", worst_square_cpu),
                         worst_square_cpu >= 0.95});
    }
    if (any_gemv) {
      targets.push_back({"M = 1 within 90% of the bandwidth bound", fmt("worst %.0f%% of the bound", 100 * worst_gemv),
                         worst_gemv >= 0.9});
    }

    targets.insert(targets.end(), fused.targets.begin(), fused.targets.end());

    if (quiet) {
      json j_rows = json::array();
      for (const Row& r : rows) {
        json j = {{"section", r.p.section},
                  {"m", r.p.m},
                  {"n", r.p.n},
                  {"k", r.p.k},
                  {"threads", r.threads},
                  {"ours_s", r.ours_s},
                  {"openblas_s", r.openblas_s},
                  {"onednn_s", r.onednn_s},
                  {"ours_gflops", gflops(r.p, r.ours_s)},
                  {"openblas_gflops", gflops(r.p, r.openblas_s)},
                  {"onednn_gflops", gflops(r.p, r.onednn_s)},
                  {"openblas_over_ours", r.vs_openblas},
                  {"onednn_over_ours", r.vs_onednn},
                  {"max_difference_vs_openblas", r.diff_openblas}};
        if (r.threads == 1) {
          j["openblas_over_ours_cpu_time"] = r.cpu_vs_openblas;
          j["onednn_over_ours_cpu_time"] = r.cpu_vs_onednn;
        }
        if (r.p.m == 1) {
          j["read_bandwidth_gbs"] = r.bandwidth / 1e9;
          j["bandwidth_bound_s"] = r.bound_s;
          j["bound_over_ours"] = r.bound_eff;
        }
        j_rows.push_back(j);
      }
      out["rows"] = j_rows;
      out["targets"] = targets_json(targets);
      if (!fused.json.is_null()) out["fused"] = fused.json;
      std::printf("%s\n", out.dump(2).c_str());
    } else {
      std::printf("\n");
      print_targets(targets);
    }
  });
}

}  // namespace tg::bench
