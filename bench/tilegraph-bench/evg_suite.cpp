// `tilegraph-bench evg`: what an epilogue costs once the GEMM has a block's accumulator, for
// D = gelu(acc * alpha + bias[col]) over an M x N output (the GEMM itself left out; the
// accumulator of every block is the same small buffer, hot in cache as it is after the main
// loop), each next to its peer in the same run:
//   fused     one EVG kernel, compute fused in registers, D written once
//   staged    the same graph node at a time over scratch (arch::CpuStaged), D written once
//   scalar    fused with 1 lane: what the vector code buys
//   unfused   the separate passes the fusion replaces: store acc to D; D = D * alpha + bias;
//             D = gelu(D), each an EVG kernel of the same vector width reading and writing D
// All kernels come from the string front end through the JIT, on one thread.
#include <stdlib.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/cli_checks.h"
#include "measure.h"
#include "suites.h"
#include "tilegraph/core/error.h"
#include "tilegraph/evg/frontend/compiled_epilogue.h"
#include "tilegraph/jit/compiler.h"

namespace tg::bench {

namespace {

using evg::AccBlock;
using evg::BlockGrid;
using evg::GemmShape;
using evg::frontend::Binding;
using evg::frontend::CompiledEpilogue;
using evg::frontend::CompileOptions;
using evg::frontend::OperandKind;
using evg::frontend::Signature;

struct Case {
  std::string name;
  double seconds = 0;
  double cpu_seconds = 0;
};

void run_suite(bool json, int64_t m, int64_t n) {
  char pattern[] = "/tmp/tg-bench-evg-XXXXXX";
  if (!::mkdtemp(pattern)) throw Error("tilegraph-bench evg: mkdtemp failed");
  struct Cleanup {
    std::filesystem::path dir;
    ~Cleanup() {
      std::error_code ignored;
      std::filesystem::remove_all(dir, ignored);
    }
  } cleanup{pattern};
  jit::Config config = jit::Config::from_env();
  config.cache_dir = cleanup.dir / "cache";
  jit::Compiler compiler(config);
  const auto options = [&](int lanes, bool fuse) {
    CompileOptions o;
    o.lanes = lanes;
    o.fuse_compute = fuse;
    o.compiler = &compiler;
    return o;
  };

  Signature sig;
  sig.input("alpha", OperandKind::kScalar).input("bias", OperandKind::kRowVector).output("D");
  const std::string source = "D = gelu(acc * alpha + bias[col])";
  const CompiledEpilogue fused(source, sig, options(0, true));
  const CompiledEpilogue staged(source, sig, options(0, false));
  const CompiledEpilogue scalar(source, sig, options(1, true));
  const CompiledEpilogue store("D = acc", Signature().output("D"), options(0, true));
  const CompiledEpilogue bias_pass("D = acc * alpha + bias[col]", sig, options(0, true));
  const CompiledEpilogue gelu_pass("D = gelu(acc)", Signature().output("D"), options(0, true));

  const BlockGrid grid{64, 256};
  std::vector<float> hot(size_t(grid.block_rows * grid.block_cols));
  for (size_t i = 0; i < hot.size(); ++i) hot[i] = float(int(i % 97) - 48) / 16.0f;
  std::vector<float> bias(static_cast<size_t>(n)), d(static_cast<size_t>(m * n));
  for (int64_t c = 0; c < n; ++c) bias[size_t(c)] = float(c % 13) / 8.0f - 0.75f;
  std::vector<AccBlock> hot_blocks, d_blocks;
  for (int64_t r = 0; r < m; r += grid.block_rows) {
    for (int64_t c = 0; c < n; c += grid.block_cols) {
      const int64_t rows = std::min(grid.block_rows, m - r), cols = std::min(grid.block_cols, n - c);
      hot_blocks.push_back({hot.data(), grid.block_cols, r, c, rows, cols});
      d_blocks.push_back({d.data() + r * n + c, n, r, c, rows, cols});
    }
  }
  const GemmShape problem{m, n, 0};
  const std::map<std::string, Binding, std::less<>> bindings = {
      {"alpha", Binding::value(0.5f)}, {"bias", Binding::vector(bias.data())}, {"D", Binding::matrix(d.data(), n)}};
  const std::map<std::string, Binding, std::less<>> d_only = {{"D", Binding::matrix(d.data(), n)}};

  std::vector<Case> cases;
  const auto time = [&](const std::string& name, const std::function<void()>& fn) {
    const Timing t = measure("evg/" + name, fn);
    cases.push_back({name, t.median_s, t.cpu_median_s});
  };
  time("fused", [&] { fused.run(problem, grid, hot_blocks, bindings); });
  time("staged", [&] { staged.run(problem, grid, hot_blocks, bindings); });
  time("scalar", [&] { scalar.run(problem, grid, hot_blocks, bindings); });
  time("unfused", [&] {
    store.run(problem, grid, hot_blocks, d_only);
    bias_pass.run(problem, grid, d_blocks, bindings);  // reads D as its accumulator, writes D
    gelu_pass.run(problem, grid, d_blocks, d_only);
  });

  const double elements = double(m * n);
  const double fused_cpu = cases[0].cpu_seconds;
  if (json) {
    nlohmann::json out = {{"suite", "evg"},
                          {"m", m},
                          {"n", n},
                          {"lanes", fused.lanes()},
                          {"epilogue", source},
                          {"cases", nlohmann::json::array()}};
    for (const Case& c : cases) {
      out["cases"].push_back({{"name", c.name},
                              {"median_ms", c.seconds * 1e3},
                              {"cpu_median_ms", c.cpu_seconds * 1e3},
                              {"cpu_ns_per_element", c.cpu_seconds / elements * 1e9},
                              {"vs_fused", c.cpu_seconds / fused_cpu}});
    }
    std::printf("%s\n", out.dump(2).c_str());
    return;
  }
  std::printf("tilegraph-bench evg: %s over %lldx%lld (f32, %d lanes, 1 thread, blocks %lldx%lld)\n", source.c_str(),
              static_cast<long long>(m), static_cast<long long>(n), fused.lanes(),
              static_cast<long long>(grid.block_rows), static_cast<long long>(grid.block_cols));
  std::printf("%-9s %12s %12s %14s %10s\n", "case", "median ms", "cpu ms", "cpu ns/elem", "vs fused");
  for (const Case& c : cases) {
    std::printf("%-9s %12.3f %12.3f %14.3f %9.2fx\n", c.name.c_str(), c.seconds * 1e3, c.cpu_seconds * 1e3,
                c.cpu_seconds / elements * 1e9, c.cpu_seconds / fused_cpu);
  }
}

}  // namespace

void add_evg_suite(CLI::App& app) {
  auto json = std::make_shared<bool>(false);
  auto m = std::make_shared<int64_t>(1024);
  auto n = std::make_shared<int64_t>(4096);
  auto* cmd = app.add_subcommand("evg", "Epilogue visitor graphs: fused vs staged vs scalar vs separate passes");
  cmd->add_flag("--json", *json, std::string("Print one JSON object instead of the table"));
  cmd->add_option("-m", *m, "Output rows")
      ->check(tg::cli::integer_in<int64_t>(1, int64_t(1) << 16))
      ->capture_default_str();
  cmd->add_option("-n", *n, "Output columns")
      ->check(tg::cli::integer_in<int64_t>(1, int64_t(1) << 16))
      ->capture_default_str();
  cmd->callback([=] { run_suite(*json, *m, *n); });
}

}  // namespace tg::bench
