// `tilegraph jit compile|ls|stats|clear`: build one kernel through the JIT (as a program would)
// and inspect or empty the disk cache ($TG_JIT_CACHE_DIR).
#include <chrono>
#include <cstdio>
#include <ctime>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "commands.h"
#include "tilegraph/core/error.h"
#include "tilegraph/jit/compiler.h"

namespace tg::cli {

namespace {

struct CompileOptions {
  std::string kernel_template;
  std::vector<std::string> defines;
  std::vector<std::string> include_dirs;
  std::string kernel_type = "cpu";
  bool json = false;
};

jit::MacroMap parse_defines(const std::vector<std::string>& defines) {
  jit::MacroMap macros;
  for (const std::string& define : defines) {
    const size_t eq = define.find('=');
    if (eq == std::string::npos) throw Error("jit compile: -D " + define + ": expected NAME=VALUE");
    if (!macros.insert(define.substr(0, eq), define.substr(eq + 1))) {
      throw Error("jit compile: macro " + define.substr(0, eq) + " given twice");
    }
  }
  return macros;
}

std::string local_time(int64_t unix_ms) {
  const time_t seconds = time_t(unix_ms / 1000);
  tm parts;
  localtime_r(&seconds, &parts);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", &parts);
  return text;
}

std::string human_bytes(uint64_t bytes) {
  char text[32];
  if (bytes >= (uint64_t(1) << 30)) {
    std::snprintf(text, sizeof text, "%.1f GiB", double(bytes) / double(uint64_t(1) << 30));
  } else if (bytes >= (uint64_t(1) << 20)) {
    std::snprintf(text, sizeof text, "%.1f MiB", double(bytes) / double(1 << 20));
  } else if (bytes >= 1024) {
    std::snprintf(text, sizeof text, "%.1f KiB", double(bytes) / 1024.0);
  } else {
    std::snprintf(text, sizeof text, "%llu B", static_cast<unsigned long long>(bytes));
  }
  return text;
}

// Paths are bytes, not necessarily UTF-8; strict dumping would throw on them (after `clear` had
// already removed the entries). A byte that is not UTF-8 prints as U+FFFD.
void print_json(const nlohmann::json& json) {
  std::printf("%s\n", json.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
}

void run_compile(const CompileOptions& options) {
  const jit::MacroMap macros = parse_defines(options.defines);
  const jit::KernelType type = jit::parse_kernel_type(options.kernel_type);
  jit::Compiler& compiler = jit::Compiler::instance();
  const auto start = std::chrono::steady_clock::now();
  const jit::Kernel kernel = compiler.load(options.kernel_template, macros, type, options.include_dirs);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::string source(jit::to_string(kernel.source));
  if (options.json) {
    const nlohmann::json out = {{"id", kernel.id},
                                {"source", source},
                                {"seconds", seconds},
                                {"kernel", compiler.cache().kernel_path(kernel.id).string()},
                                {"cache_dir", compiler.cache().dir().string()}};
    print_json(out);
    return;
  }
  std::printf("%s  %s  (%.3f s)\n", kernel.id.c_str(), source.c_str(), seconds);
  std::printf("kernel: %s\n", compiler.cache().kernel_path(kernel.id).string().c_str());
}

void run_ls(bool json) {
  const jit::Config config = jit::Config::from_env();
  const jit::DiskCache cache = jit::DiskCache::open_existing(config.cache_dir);
  const std::vector<jit::CacheEntryInfo> entries = cache.list();
  if (json) {
    nlohmann::json out = nlohmann::json::array();
    for (const jit::CacheEntryInfo& e : entries) {
      nlohmann::json item = {
          {"id", e.id}, {"bytes", e.bytes}, {"in_use", e.in_use}, {"complete", e.manifest.has_value()}};
      if (e.manifest) {
        item["template"] = e.manifest->template_path();
        item["macros"] = e.manifest->macros();
        item["created"] = e.manifest->created_ms;
        item["last_used"] = e.manifest->last_used_ms;
        item["compile_seconds"] = e.manifest->compile_seconds;
      }
      out.push_back(std::move(item));
    }
    print_json(out);
    return;
  }
  std::printf("%s: %zu entries, most recently used first\n", cache.dir().c_str(), entries.size());
  for (const jit::CacheEntryInfo& e : entries) {
    if (!e.manifest) {
      std::printf("%.16s  %10s  (incomplete: no readable manifest)\n", e.id.c_str(), human_bytes(e.bytes).c_str());
      continue;
    }
    std::printf("%.16s  %10s  %s%s  %s  %s\n", e.id.c_str(), human_bytes(e.bytes).c_str(),
                local_time(e.manifest->last_used_ms).c_str(), e.in_use ? "  in use" : "",
                e.manifest->template_path().c_str(), e.manifest->macros().c_str());
  }
}

void run_stats(bool json) {
  const jit::Config config = jit::Config::from_env();
  const jit::CacheStats s = jit::DiskCache::open_existing(config.cache_dir).stats(config.max_cache_bytes);
  if (json) {
    const nlohmann::json out = {{"cache_dir", s.dir.string()},
                                {"entries", s.entries},
                                {"incomplete", s.incomplete},
                                {"in_use", s.in_use},
                                {"bytes", s.bytes},
                                {"max_bytes", s.max_bytes},
                                {"dependency_records", s.dependency_records},
                                {"toolchain_records", s.toolchain_records},
                                {"temporaries", s.temporaries},
                                {"compile_seconds", s.compile_seconds}};
    print_json(out);
    return;
  }
  std::printf("cache dir:          %s\n", s.dir.c_str());
  std::printf("entries:            %zu (%zu in use, %zu incomplete)\n", s.entries, s.in_use, s.incomplete);
  std::printf("size:               %s of %s (TG_JIT_CACHE_MAX_BYTES)\n", human_bytes(s.bytes).c_str(),
              human_bytes(s.max_bytes).c_str());
  std::printf("dependency records: %zu\n", s.dependency_records);
  std::printf("toolchain records:  %zu\n", s.toolchain_records);
  std::printf("temporaries:        %zu\n", s.temporaries);
  std::printf("compile time saved: %.2f s per full reuse\n", s.compile_seconds);
}

void run_clear(bool json) {
  const jit::Config config = jit::Config::from_env();
  jit::DiskCache cache = jit::DiskCache::open_existing(config.cache_dir);
  const jit::CacheRemoval r = cache.clear();
  if (json) {
    const nlohmann::json out = {{"cache_dir", cache.dir().string()},
                                {"removed", r.removed},
                                {"bytes", r.bytes},
                                {"kept_in_use", r.kept_in_use},
                                {"kept_temporaries", r.kept_temporaries}};
    print_json(out);
    return;
  }
  std::printf("removed %zu entries (%s) from %s", r.removed, human_bytes(r.bytes).c_str(), cache.dir().c_str());
  if (r.kept_in_use > 0) std::printf("; kept %zu in use by running processes", r.kept_in_use);
  if (r.kept_temporaries > 0) {
    std::printf("; kept %zu temporaries of running builds", r.kept_temporaries);
  }
  std::printf("\n");
}

}  // namespace

void add_jit_command(CLI::App& app) {
  auto* jit = app.add_subcommand("jit", "Compile kernels through the JIT and manage its disk cache");
  jit->require_subcommand(1);

  auto options = std::make_shared<CompileOptions>();
  auto* compile = jit->add_subcommand("compile", "Get one kernel: memory, disk cache or compile");
  compile->add_option("--template", options->kernel_template, "Kernel template (a C++ or CUDA file)")->required();
  compile->add_option("-D,--define", options->defines, "Macro NAME=VALUE (repeatable)");
  compile->add_option("-I,--include", options->include_dirs, "Extra include directory (repeatable)");
  compile->add_option("--kernel-type", options->kernel_type, "cpu (host C++ compiler) or cuda (nvcc)")
      ->capture_default_str();
  compile->add_flag("--json", options->json, std::string("Print one JSON object"));
  compile->callback([options] { run_compile(*options); });

  auto json = std::make_shared<bool>(false);
  auto* ls = jit->add_subcommand("ls", "List the cached kernels");
  ls->add_flag("--json", *json, std::string("Print JSON"));
  ls->callback([json] { run_ls(*json); });
  auto* stats = jit->add_subcommand("stats", "Summarise the disk cache");
  stats->add_flag("--json", *json, std::string("Print JSON"));
  stats->callback([json] { run_stats(*json); });
  auto* clear = jit->add_subcommand("clear", "Remove every cached kernel and record not in use");
  clear->add_flag("--json", *json, std::string("Print JSON"));
  clear->callback([json] { run_clear(*json); });
}

}  // namespace tg::cli
