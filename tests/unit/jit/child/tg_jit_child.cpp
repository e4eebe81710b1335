// tg_jit_child: one get_kernel in a fresh process, for the multi-process JIT tests.
//   tg_jit_child --cache DIR --template FILE [-D NAME=VALUE]... [--scale S] [--wait-for FILE]
// Waits until FILE exists (so several children can be released at once), loads the kernel,
// runs it as a saxpy with SCALE = S, and prints {"id", "source", "works"} as JSON.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "jit/kernels/saxpy_params.h"
#include "tilegraph/jit/compiler.h"

namespace {

bool saxpy_works(tg::jit::EntryFn entry, float scale) {
  constexpr int64_t n = 257;
  std::vector<float> x(n), y(n, 1.0f);
  for (int64_t i = 0; i < n; ++i) x[size_t(i)] = float(i);
  const SaxpyParams params{n, x.data(), y.data()};
  entry(3, nullptr, &params);
  for (int64_t i = 0; i < n; ++i) {
    if (y[size_t(i)] != scale * float(i) + 1.0f) return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    std::string cache;
    std::string kernel_template;
    std::string wait_for;
    float scale = 1;
    tg::jit::MacroMap macros;
    for (int i = 1; i + 1 < argc; i += 2) {
      const std::string flag = argv[i];
      const std::string value = argv[i + 1];
      if (flag == "--cache") {
        cache = value;
      } else if (flag == "--template") {
        kernel_template = value;
      } else if (flag == "--wait-for") {
        wait_for = value;
      } else if (flag == "--scale") {
        scale = std::stof(value);
      } else if (flag == "-D") {
        const size_t eq = value.find('=');
        macros.set(value.substr(0, eq), eq == std::string::npos ? "" : value.substr(eq + 1));
      } else {
        std::fprintf(stderr, "tg_jit_child: unknown argument %s\n", flag.c_str());
        return 2;
      }
    }
    while (!wait_for.empty() && !std::filesystem::exists(wait_for)) ::usleep(1000);
    tg::jit::Config config = tg::jit::Config::from_env();
    config.cache_dir = cache;
    tg::jit::Compiler compiler(config);
    const tg::jit::Kernel kernel = compiler.load(kernel_template, macros, tg::jit::KernelType::kCpu);
    const nlohmann::json out = {{"id", kernel.id},
                                {"source", std::string(tg::jit::to_string(kernel.source))},
                                {"works", saxpy_works(kernel.entry, scale)}};
    std::printf("%s\n", out.dump().c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tg_jit_child: %s\n", e.what());
    return 1;
  }
}
