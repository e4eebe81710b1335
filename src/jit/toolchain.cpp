#include "toolchain.h"

#include <sys/stat.h>
#include <sys/utsname.h>

#include <nlohmann/json.hpp>

#include "escape.h"
#include "file_util.h"
#include "tilegraph/core/error.h"
#include "tilegraph/jit/process.h"
#include "tilegraph/jit/sha256.h"

namespace tg::jit {

namespace {

std::string host_arch() {
  utsname name;
  if (::uname(&name) != 0) throw Error("jit: uname failed");
  return name.machine;
}

bool is_cuda_arch(const std::string& arch) {
  return !arch.empty() && arch.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") == std::string::npos;
}

nlohmann::json stamp_json(const FileStamp& s) {
  return {
      {"device", s.device}, {"inode", s.inode}, {"size", s.size}, {"mtime_ns", s.mtime_ns}, {"ctime_ns", s.ctime_ns}};
}

// Why find_executable(name) found nothing.
std::string why_not_found(const std::string& name) {
  if (name.find('/') == std::string::npos) return "is not on PATH";
  struct stat st;
  if (::stat(name.c_str(), &st) != 0) return "does not exist";
  if (!S_ISREG(st.st_mode)) return "is not a file";
  return "is not executable";
}

std::string resolve_compiler(KernelType type, const Config& config) {
  if (type == KernelType::kCpu) {
    const std::string path = find_executable(config.cxx);
    if (path.empty()) {
      throw Error("jit: the C++ compiler TG_JIT_CXX='" + config.cxx + "' " + why_not_found(config.cxx));
    }
    return path;
  }
  // Only the default name falls back to CUDA's usual install location; a configured one is
  // taken as it is.
  if (config.nvcc == "nvcc") {
    std::string path = find_executable("nvcc");
    if (path.empty()) path = find_executable("/usr/local/cuda/bin/nvcc");
    if (path.empty()) {
      throw Error(
          "jit: cuda kernels need nvcc, which is neither on PATH nor at "
          "/usr/local/cuda/bin/nvcc (install the CUDA toolkit or set TG_JIT_NVCC)");
    }
    return path;
  }
  const std::string path = find_executable(config.nvcc);
  if (path.empty()) {
    throw Error("jit: cuda kernels need nvcc, and TG_JIT_NVCC='" + config.nvcc + "' " + why_not_found(config.nvcc));
  }
  return path;
}

std::string probe_version(const std::string& compiler, const std::vector<std::string>& environment,
                          std::chrono::seconds time_limit) {
  ProcessOptions options;
  options.env = environment;
  options.timeout = time_limit;
  const ProcessResult result = run_process({compiler, "--version"}, options);
  if (!result.ok() || result.out.empty()) {
    throw Error("jit: '" + compiler + " --version' failed (" + result.describe() + "): " + result.err);
  }
  return result.out;
}

// The version from the record for this compiler path if the compiler file is unchanged since,
// else from the compiler itself (and the record is rewritten).
std::string compiler_version(const std::string& compiler, const std::vector<std::string>& environment,
                             std::chrono::seconds time_limit, const std::filesystem::path& records_dir,
                             const std::filesystem::path& tmp_dir) {
  const std::filesystem::path record = records_dir / (sha256_hex(compiler) + ".json");
  const std::optional<FileStamp> stamp = stamp_of(compiler);
  if (!stamp) throw Error("jit: compiler " + compiler + " disappeared");
  if (const std::optional<std::string> text = read_file(record)) {
    try {
      const nlohmann::json json = nlohmann::json::parse(*text);
      if (json.at("path") == escape_bytes(compiler) && json.at("stamp") == stamp_json(*stamp)) {
        return unescape_bytes(json.at("version").get<std::string>());
      }
    } catch (const nlohmann::json::exception&) {
      // unreadable record: probe again and overwrite it
    }
  }
  std::string version = probe_version(compiler, environment, time_limit);
  if (stamp->is_settled(unix_time_ns())) {
    const nlohmann::json json = {
        {"path", escape_bytes(compiler)}, {"stamp", stamp_json(*stamp)}, {"version", escape_bytes(version)}};
    write_file_atomically(tmp_dir, record, json.dump(2) + "\n");
  }
  return version;
}

}  // namespace

std::vector<std::string> Toolchain::flags(const MacroMap& macros, const std::vector<std::string>& include_dirs) const {
  std::vector<std::string> out = base_flags;
  for (const std::string& dir : include_dirs) out.push_back("-I" + dir);
  for (const auto& [name, value] : macros) out.push_back("-D" + name + "=" + value);
  return out;
}

ProcessOptions Toolchain::process_options(const std::filesystem::path& tmp_dir) const {
  ProcessOptions options;
  options.env = environment;
  options.env->push_back("TMPDIR=" + tmp_dir.string());
  options.timeout = time_limit;
  options.cpu_time = cpu_time;
  options.address_space = max_bytes;
  return options;
}

Toolchain find_toolchain(KernelType type, const Config& config, const std::filesystem::path& records_dir,
                         const std::filesystem::path& tmp_dir) {
  Toolchain t;
  t.compiler = resolve_compiler(type, config);
  const char* path = std::getenv("PATH");
  t.environment = {std::string("PATH=") + (path ? path : "/usr/local/bin:/usr/bin:/bin"), "LC_ALL=C"};
  t.time_limit = config.compile_timeout;
  t.cpu_time = config.compile_cpu_time;
  t.max_bytes = config.compile_max_bytes;
  t.version = compiler_version(t.compiler, t.environment, t.time_limit, records_dir, tmp_dir);
  const std::string include = std::string("-I") + TG_JIT_INCLUDE_DIR;
  if (type == KernelType::kCpu) {
    t.arch = host_arch();
    t.base_flags = {"-std=c++20", "-O2", "-fPIC", "-shared", include};
  } else {
    if (!is_cuda_arch(config.cuda_arch)) {
      throw Error("jit: TG_JIT_CUDA_ARCH='" + config.cuda_arch + "': expected a name like sm_75");
    }
    t.arch = config.cuda_arch;
    t.base_flags = {"-std=c++20", "-O2", "-shared", "-Xcompiler=-fPIC", "-arch=" + t.arch, "-x", "cu", include};
  }
  return t;
}

}  // namespace tg::jit
