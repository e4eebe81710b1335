// tilegraph-bench: benchmark suites, each printing ratios against a peer measured in the same run.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "common/cli_main.h"
#include "suites.h"

// OpenBLAS picks its kernels from OPENBLAS_CORETYPE when the library is loaded, before main()
// runs. The gemm suite compares against its SkylakeX (AVX-512) kernels whatever its own CPU
// detection would choose (SkylakeX on this machine today; a hypervisor hiding a CPUID bit would
// silently give the AVX2 ones), so the first thing the program does is set the variable, unless
// the caller chose a core, and start itself again. A CPU without AVX-512 (AMD Zen 3) would stop
// at the first SkylakeX instruction (SIGILL): there OpenBLAS keeps its own choice, which the gemm
// suite prints.
namespace {

void run_with_openblas_core(char** argv) {
  if (std::getenv("OPENBLAS_CORETYPE") || !__builtin_cpu_supports("avx512f")) return;
  setenv("OPENBLAS_CORETYPE", "SkylakeX", 1);
  execv("/proc/self/exe", argv);
  std::fprintf(stderr, "tilegraph-bench: cannot restart with OPENBLAS_CORETYPE=SkylakeX: %s\n", std::strerror(errno));
}

}  // namespace

int main(int argc, char** argv) {
  run_with_openblas_core(argv);
  CLI::App app{"tilegraph-bench: throughput and latency benchmarks with in-run baselines"};
  app.require_subcommand(1);
  tg::bench::add_ops_suite(app);
  tg::bench::add_jit_suite(app);
  tg::bench::add_graph_suite(app);
  tg::bench::add_model_suite(app);
  tg::bench::add_gemm_suite(app);
  tg::bench::add_evg_suite(app);
  tg::bench::add_sim_suite(app);
#ifdef TG_BENCH_TX8
  tg::bench::add_tx8_suite(app);
#endif
  return tg::cli::run_cli(app, argc, argv, "tilegraph-bench");
}
