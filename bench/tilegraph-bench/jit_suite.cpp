// `tilegraph-bench jit`: the three costs of getting a JIT kernel, each next to a peer measured in
// the same run:
//   memory hit    get_kernel for a kernel this process already has  vs  torch_catlass's lookup
//                 (SHA-256 of the macro string, then a map lookup, on every call)
//   disk hit      the first get_kernel in a fresh process, from the disk cache  vs  dlopen+dlsym
//                 of the same .so (the floor)
//   cold compile  get_kernel of a new small kernel  vs  the compiler run alone on it
// Fresh-process figures come from this binary re-run as `tilegraph-bench jit-child`, which times
// one call and prints it; the median over the children is reported.
#include <dlfcn.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>
#include <vector>

#include <benchmark/benchmark.h>

#include "common/cli_checks.h"
#include "measure.h"
#include "suites.h"
#include "tilegraph/core/error.h"
#include "tilegraph/jit/compiler.h"
#include "tilegraph/jit/macros.h"
#include "tilegraph/jit/process.h"
#include "tilegraph/jit/sha256.h"

namespace tg::bench {

namespace {

constexpr const char* kKernelSource = R"(// tilegraph-bench jit: y = SCALE * x + y
#include <cstdint>

struct Params {
  int64_t n;
  const float* x;
  float* y;
};

extern "C" void run(uint32_t block_num, void* stream, const void* params) {
  (void)block_num;
  (void)stream;
  const auto* p = static_cast<const Params*>(params);
  for (int64_t i = 0; i < p->n; ++i) p->y[i] = float(SCALE) * p->x[i] + p->y[i];
}
)";

// Macros the size of a real GEMM specialisation (torch_catlass's JitMacroGenerator output).
jit::MacroMap macros(int scale) {
  return {{"SCALE", std::to_string(scale)}, {"ELEMENT_A", "half"},    {"ELEMENT_B", "half"},
          {"ELEMENT_C", "float"},           {"LAYOUT_A", "RowMajor"}, {"LAYOUT_B", "ColumnMajor"}};
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

struct Spread {
  double median = 0, min = 0, max = 0;
};

Spread spread(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return {n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]), v.front(), v.back()};
}

nlohmann::json timing_json(const Timing& t, double unit) {
  return {{"median", t.median_s * unit},
          {"min", t.min_s * unit},
          {"max", t.max_s * unit},
          {"cpu_median", t.cpu_median_s * unit}};
}

nlohmann::json spread_json(const Spread& s, double unit) {
  return {{"median", s.median * unit}, {"min", s.min * unit}, {"max", s.max * unit}};
}

std::string self_path() { return std::filesystem::read_symlink("/proc/self/exe").string(); }

// Runs `tilegraph-bench jit-child ...` and returns the seconds it printed.
double child_seconds(const std::vector<std::string>& args, const std::string& cache_dir) {
  std::vector<std::string> argv = {self_path(), "jit-child"};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<std::string> env = {"TG_JIT_CACHE_DIR=" + cache_dir};
  for (char** e = environ; *e; ++e) {
    if (!std::string_view(*e).starts_with("TG_JIT_CACHE_DIR=")) env.emplace_back(*e);
  }
  jit::ProcessOptions options;
  options.env = env;
  const jit::ProcessResult result = jit::run_process(argv, options);
  if (!result.ok()) throw Error("jit-child failed (" + result.describe() + "): " + result.err);
  return std::stod(result.out);
}

void run_suite(bool json, int processes, int compiles) {
  char pattern[] = "/tmp/tg-bench-jit-XXXXXX";
  if (!::mkdtemp(pattern)) throw Error("tilegraph-bench jit: mkdtemp failed");
  const std::filesystem::path dir = pattern;
  struct Cleanup {
    std::filesystem::path dir;
    ~Cleanup() {
      std::error_code ignored;
      std::filesystem::remove_all(dir, ignored);
    }
  } cleanup{dir};
  const std::filesystem::path source = dir / "saxpy.cpp";
  std::ofstream(source) << kKernelSource;
  jit::Config config = jit::Config::from_env();
  config.cache_dir = dir / "cache";

  // Cold compile: a new kernel each time (new SCALE), in a new Compiler.
  std::vector<double> cold, compiler_alone;
  for (int i = 0; i < compiles; ++i) {
    jit::Compiler compiler(config);
    auto start = std::chrono::steady_clock::now();
    const jit::Kernel k = compiler.load(source.string(), macros(1000 + i), jit::KernelType::kCpu);
    cold.push_back(seconds_since(start));
    if (k.source != jit::KernelSource::kCompiled) throw Error("tilegraph-bench jit: expected a compile");
    std::vector<std::string> argv = {jit::find_executable(config.cxx),
                                     "-std=c++20",
                                     "-O2",
                                     "-fPIC",
                                     "-shared",
                                     "-DSCALE=" + std::to_string(2000 + i),
                                     "-o",
                                     (dir / "alone.so").string(),
                                     source.string()};
    start = std::chrono::steady_clock::now();
    if (!jit::run_process(argv).ok()) throw Error("tilegraph-bench jit: the compiler alone failed");
    compiler_alone.push_back(seconds_since(start));
  }

  // Memory hit, and torch_catlass's per-call SHA-256 lookup as the peer.
  jit::Compiler compiler(config);
  const jit::MacroMap m = macros(1);
  const jit::Kernel kernel = compiler.load(source.string(), m, jit::KernelType::kCpu);
  const std::string path = source.string();
  const Timing memory =
      measure("jit/memory_hit", [&] { benchmark::DoNotOptimize(compiler.get_kernel(path, m, jit::KernelType::kCpu)); });
  const std::unordered_map<std::string, jit::EntryFn> loaded = {{kernel.id, kernel.entry}};
  const Timing sha256_lookup = measure("jit/sha256_lookup", [&] {
    const std::string uuid = jit::sha256_hex(jit::canonical_macros(m, "x86_64", jit::KernelType::kCpu));
    benchmark::DoNotOptimize(loaded.find(uuid));
  });

  // Disk hit in fresh processes, and dlopen alone as the floor.
  const std::string so = compiler.cache().kernel_path(kernel.id).string();
  std::vector<std::string> load_args = {"--template", path};
  for (const auto& [name, value] : m) load_args.insert(load_args.end(), {"-D", name + "=" + value});
  std::vector<double> disk, dlopen_alone;
  for (int i = 0; i < processes; ++i) {
    disk.push_back(child_seconds(load_args, config.cache_dir.string()));
    dlopen_alone.push_back(child_seconds({"--dlopen", so}, config.cache_dir.string()));
  }

  const Spread cold_s = spread(cold), alone_s = spread(compiler_alone), disk_s = spread(disk),
               floor_s = spread(dlopen_alone);
  if (json) {
    const nlohmann::json out = {{"suite", "jit"},
                                {"memory_hit_ns", timing_json(memory, 1e9)},
                                {"sha256_lookup_ns", timing_json(sha256_lookup, 1e9)},
                                {"disk_hit_ms", spread_json(disk_s, 1e3)},
                                {"dlopen_alone_ms", spread_json(floor_s, 1e3)},
                                {"cold_compile_ms", spread_json(cold_s, 1e3)},
                                {"compiler_alone_ms", spread_json(alone_s, 1e3)},
                                {"processes", processes},
                                {"compiles", compiles},
                                {"targets", {{"memory_hit_ns", 100}, {"disk_hit_ms", 5}}}};
    std::printf("%s\n", out.dump(2).c_str());
    return;
  }
  std::printf("%-34s %12s %12s %12s   %s\n", "jit", "median", "min", "max", "peer (median) / ratio");
  std::printf("%-34s %9.1f ns %9.1f ns %9.1f ns   SHA-256 lookup %.1f ns / %.1fx faster   (target <= 100 ns)\n",
              "memory hit, wall time", memory.median_s * 1e9, memory.min_s * 1e9, memory.max_s * 1e9,
              sha256_lookup.median_s * 1e9, sha256_lookup.median_s / memory.median_s);
  std::printf("%-34s %9.1f ns %12s %12s   SHA-256 lookup %.1f ns / %.1fx faster\n", "memory hit, CPU time",
              memory.cpu_median_s * 1e9, "", "", sha256_lookup.cpu_median_s * 1e9,
              sha256_lookup.cpu_median_s / memory.cpu_median_s);
  std::printf("%-34s %9.3f ms %9.3f ms %9.3f ms   dlopen alone %.3f ms / %.1fx   (target <= 5 ms)\n",
              ("disk hit, fresh process (n=" + std::to_string(processes) + ")").c_str(), disk_s.median * 1e3,
              disk_s.min * 1e3, disk_s.max * 1e3, floor_s.median * 1e3, disk_s.median / floor_s.median);
  std::printf("%-34s %9.1f ms %9.1f ms %9.1f ms   compiler alone %.1f ms / %.2fx\n",
              ("cold compile, small kernel (n=" + std::to_string(compiles) + ")").c_str(), cold_s.median * 1e3,
              cold_s.min * 1e3, cold_s.max * 1e3, alone_s.median * 1e3, cold_s.median / alone_s.median);
}

// One timed call in this fresh process: the first get_kernel (disk hit), or dlopen+dlsym alone.
void run_child(const std::string& kernel_template, const std::vector<std::string>& defines,
               const std::string& dlopen_path) {
  if (!dlopen_path.empty()) {
    const auto start = std::chrono::steady_clock::now();
    void* handle = ::dlopen(dlopen_path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle || !::dlsym(handle, "run")) throw Error("jit-child: dlopen failed");
    std::printf("%.9f\n", seconds_since(start));
    ::dlclose(handle);
    return;
  }
  jit::MacroMap m;
  for (const std::string& d : defines) m.set(d.substr(0, d.find('=')), d.substr(d.find('=') + 1));
  const auto start = std::chrono::steady_clock::now();
  const jit::Kernel k = jit::Compiler::instance().load(kernel_template, m, jit::KernelType::kCpu);
  const double seconds = seconds_since(start);
  if (k.source != jit::KernelSource::kDisk) throw Error("jit-child: expected a disk hit");
  std::printf("%.9f\n", seconds);
}

}  // namespace

void add_jit_suite(CLI::App& app) {
  auto json = std::make_shared<bool>(false);
  auto processes = std::make_shared<int>(11);
  auto compiles = std::make_shared<int>(5);
  auto* cmd = app.add_subcommand("jit", "JIT kernel lookup: memory hit, disk hit in a fresh process, cold compile");
  cmd->add_flag("--json", *json, std::string("Print one JSON object instead of the table"));
  cmd->add_option("--processes", *processes, "Fresh processes timed for the disk hit")
      ->check(tg::cli::integer_in(1, 1000))
      ->capture_default_str();
  cmd->add_option("--compiles", *compiles, "Cold compiles timed")
      ->check(tg::cli::integer_in(1, 1000))
      ->capture_default_str();
  cmd->callback([=] { run_suite(*json, *processes, *compiles); });

  auto kernel_template = std::make_shared<std::string>();
  auto defines = std::make_shared<std::vector<std::string>>();
  auto dlopen_path = std::make_shared<std::string>();
  auto* child = app.add_subcommand("jit-child", "");
  child->group("");  // internal: the fresh process of the jit suite
  child->add_option("--template", *kernel_template, "");
  child->add_option("-D", *defines, "");
  child->add_option("--dlopen", *dlopen_path, "");
  child->callback([=] { run_child(*kernel_template, *defines, *dlopen_path); });
}

}  // namespace tg::bench
