// `tilegraph info`: what this build and machine offer.
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "commands.h"
#include "tilegraph/backends.h"
#include "tilegraph/cpu/cpu_backend.h"
#include "tilegraph/runtime/config.h"

namespace tg::cli {

namespace {

const char* vendor_name(cpu::CpuVendor vendor) {
  switch (vendor) {
    case cpu::CpuVendor::INTEL: return "Intel";
    case cpu::CpuVendor::AMD: return "AMD";
    case cpu::CpuVendor::OTHER: break;
  }
  return "other";
}

}  // namespace

void add_info_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "info",
      "Show the version, backends, the CPU (vendor, family, features), the CPU kernels chosen and the thread count");
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, std::string("Print one JSON object instead of text"));
  cmd->callback([json] {
    const int threads = config::default_num_threads();
    const cpu::CpuFeatures& cpu = cpu::cpu_features();
    if (*json) {
      nlohmann::json features;
      for (const cpu::NamedCpuFeature& feature : cpu::named_cpu_features()) features[feature.key] = feature.present;
      nlohmann::json kernels = {{"table", cpu::cpu_kernel_table()}};
      for (const cpu::CpuKernelChoice& choice : cpu::cpu_kernel_choices()) kernels[choice.path] = choice.kernel;
      const nlohmann::json out = {
          {"version", TG_VERSION},    {"backends", backend_names()},
          {"threads", threads},       {"cpu", {{"vendor", vendor_name(cpu.vendor)}, {"family", cpu.family}}},
          {"cpu_features", features}, {"cpu_kernels", kernels},
      };
      std::printf("%s\n", out.dump(2).c_str());
      return;
    }
    std::string backends;
    for (const std::string& name : backend_names()) backends += (backends.empty() ? "" : ", ") + name;
    std::printf("tilegraph %s\n", TG_VERSION);
    std::printf("backends:     %s\n", backends.c_str());
    std::printf("cpu:          %s, family %d\n", vendor_name(cpu.vendor), cpu.family);
    std::printf("cpu features: %s\n", cpu::cpu_features_string().c_str());
    std::printf("cpu kernels:  the %s table\n", cpu::cpu_kernel_table().c_str());
    for (const cpu::CpuKernelChoice& choice : cpu::cpu_kernel_choices()) {
      std::printf("  %-18s %s\n", (std::string(choice.path) + ":").c_str(), choice.kernel.c_str());
    }
    std::printf("threads:      %d (TG_NUM_THREADS overrides)\n", threads);
  });
}

}  // namespace tg::cli
