#include "tilegraph/jit/compiler.h"

#include <sys/stat.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "dependencies.h"
#include "escape.h"
#include "file_util.h"
#include "request_table.h"
#include "tilegraph/core/error.h"
#include "tilegraph/core/input_file.h"
#include "tilegraph/jit/kernel_id.h"
#include "tilegraph/jit/macros.h"
#include "tilegraph/jit/process.h"
#include "tilegraph/jit/sha256.h"
#include "toolchain.h"

namespace tg::jit {

namespace {

// One per kernel id: serialises the threads of this process that want the same kernel, so it
// is loaded once (other processes are serialised by the cache's lock).
struct Slot {
  std::mutex mutex;
  std::string id;
  std::unique_ptr<LoadedKernel> kernel;
};

// Everything the kernel key is computed from, and what building the kernel needs.
struct Resolution {
  std::string id;
  nlohmann::json key;
  std::string template_path;         // canonical
  std::vector<std::string> command;  // compiler and flags
  const Toolchain* toolchain = nullptr;
  DependencyScan dependencies;
};

// A template must be a regular file: the compiler would block reading a FIFO, and never finish
// reading a device such as /dev/zero.
std::string canonical_path(std::string_view path, const char* what, bool directory) {
  std::error_code error;
  const std::filesystem::path p = std::filesystem::canonical(std::string(path), error);
  if (error) throw Error("jit: " + std::string(what) + " '" + std::string(path) + "': " + error.message());
  struct stat st;
  if (::stat(p.c_str(), &st) != 0) {
    throw Error("jit: " + std::string(what) + " '" + std::string(path) + "': " + std::strerror(errno));
  }
  if (directory ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode)) {
    throw Error("jit: " + std::string(what) + " '" + std::string(path) + "' is " + file_type_name(st.st_mode) +
                ", not " + (directory ? "a directory" : "a regular file"));
  }
  return p.string();
}

}  // namespace

struct Compiler::Impl {
  explicit Impl(Config c) : config(std::move(c)), cache(config.cache_dir) {}

  const Toolchain& toolchain(KernelType type) {
    std::lock_guard lock(toolchains_mutex);
    std::optional<Toolchain>& slot = toolchains[size_t(type)];
    if (!slot) slot = find_toolchain(type, config, cache.toolchains_dir(), cache.tmp_dir());
    return *slot;
  }

  Resolution resolve(const RequestView& request) {
    validate_macros(*request.macros);
    Resolution r;
    r.template_path = canonical_path(request.template_path, "template", false);
    std::vector<std::string> include_dirs;
    for (const std::string& dir : *request.include_dirs) {
      include_dirs.push_back(canonical_path(dir, "include directory", true));
    }
    r.toolchain = &toolchain(request.type);
    const std::vector<std::string> flags = r.toolchain->flags(*request.macros, include_dirs);
    r.command = {r.toolchain->compiler};
    r.command.insert(r.command.end(), flags.begin(), flags.end());

    nlohmann::json escaped_flags = nlohmann::json::array();
    for (const std::string& flag : flags) escaped_flags.push_back(escape_bytes(flag));
    const nlohmann::json direct = {{"template", escape_bytes(r.template_path)},
                                   {"arch", r.toolchain->arch},
                                   {"compiler", escape_bytes(r.toolchain->compiler)},
                                   {"version", escape_bytes(r.toolchain->version)},
                                   {"flags", std::move(escaped_flags)},
                                   {"tilegraph", TG_VERSION}};
    r.dependencies = scan_dependencies(r.command, r.toolchain->process_options(cache.tmp_dir()), r.template_path,
                                       sha256_hex(direct.dump()), cache.deps_dir());

    KernelKeyInputs inputs;
    inputs.macros = *request.macros;
    inputs.arch = r.toolchain->arch;
    inputs.kernel_type = request.type;
    const std::vector<TrackedFile>& files = r.dependencies.files;
    inputs.template_source = {files.front().path, files.front().sha256};
    for (size_t i = 1; i < files.size(); ++i) inputs.headers.push_back({files[i].path, files[i].sha256});
    inputs.compiler_path = r.toolchain->compiler;
    inputs.compiler_version = r.toolchain->version;
    inputs.flags = flags;
    r.key = key_material(inputs);
    r.id = jit::kernel_id(r.key);
    return r;
  }

  void build(const Resolution& r, const std::filesystem::path& work_dir, const std::filesystem::path& output) {
    std::vector<std::string> argv = r.command;
    argv.insert(argv.end(), {"-o", output.string(), r.template_path});
    ProcessOptions options = r.toolchain->process_options(work_dir);
    options.cwd = work_dir.string();
    const ProcessResult result = run_process(argv, options);
    if (!result.ok()) {
      throw Error("jit: compiling " + r.template_path + " failed (" + result.describe() + "):\n" + result.err +
                  result.out + "command: " + quote_command(argv));
    }
    if (::access(output.c_str(), F_OK) != 0) {
      throw Error("jit: the compiler reported success but wrote no " + output.string() +
                  "\ncommand: " + quote_command(argv));
    }
    // The key describes the files as they were hashed; a kernel built from an edit made while
    // the compiler ran would not match it.
    if (const std::string changed = changed_since_scan(r.dependencies); !changed.empty()) {
      throw Error("jit: " + changed + " changed while kernel " + r.id +
                  " was compiling; nothing was cached, try again");
    }
  }

  Slot& slot_for(const std::string& id) {
    std::lock_guard lock(slots_mutex);
    std::unique_ptr<Slot>& slot = slots[id];
    if (!slot) {
      slot = std::make_unique<Slot>();
      slot->id = id;
    }
    return *slot;
  }

  Kernel load_slow(const RequestView& request) {
    Resolution r = resolve(request);
    Slot& slot = slot_for(r.id);
    KernelSource source = KernelSource::kMemory;
    {
      std::lock_guard lock(slot.mutex);
      if (!slot.kernel) {
        CacheLoad loaded = cache.load_or_build(
            r.id, r.key, [&](const std::filesystem::path& work_dir, const std::filesystem::path& output) {
              build(r, work_dir, output);
            });
        source = loaded.source;
        if (source == KernelSource::kCompiled) {
          compiles += 1;
          compile_seconds.fetch_add(loaded.build_seconds);
        } else {
          disk_hits += 1;
        }
        if (!loaded.replaced_entry_problem.empty()) rebuilt_bad_entries += 1;
        slot.kernel = std::move(loaded.kernel);
      } else {
        memory_hits += 1;
      }
    }
    if (r.dependencies.record_outdated) {
      store_dependency_record(r.dependencies, r.id, cache.deps_dir(), cache.tmp_dir());
    }
    const EntryFn entry = slot.kernel->entry();
    requests.insert(request, {entry, &slot.id});
    if (source == KernelSource::kCompiled) evictions += cache.evict(config.max_cache_bytes).removed;
    return Kernel{entry, r.id, source};
  }

  const Config config;
  DiskCache cache;

  RequestTable requests;
  std::mutex slots_mutex;
  std::unordered_map<std::string, std::unique_ptr<Slot>> slots;

  std::mutex toolchains_mutex;
  std::optional<Toolchain> toolchains[2];

  std::atomic<uint64_t> memory_hits{0}, disk_hits{0}, compiles{0}, rebuilt_bad_entries{0}, evictions{0};
  std::atomic<double> compile_seconds{0};
};

Compiler& Compiler::instance() {
  static Compiler compiler(Config::from_env());
  return compiler;
}

Compiler::Compiler(Config config) : impl_(std::make_unique<Impl>(std::move(config))) {}

Compiler::~Compiler() = default;

EntryFn Compiler::get_kernel(std::string_view template_path, const MacroMap& macros, KernelType kernel_type,
                             const std::vector<std::string>& include_dirs) {
  const RequestView request{template_path, &macros, kernel_type, &include_dirs};
  if (const RequestTable::Hit* hit = impl_->requests.find(request)) {
    impl_->memory_hits.fetch_add(1, std::memory_order_relaxed);
    return hit->entry;
  }
  return impl_->load_slow(request).entry;
}

Kernel Compiler::load(std::string_view template_path, const MacroMap& macros, KernelType kernel_type,
                      const std::vector<std::string>& include_dirs) {
  const RequestView request{template_path, &macros, kernel_type, &include_dirs};
  if (const RequestTable::Hit* hit = impl_->requests.find(request)) {
    impl_->memory_hits.fetch_add(1, std::memory_order_relaxed);
    return Kernel{hit->entry, *hit->id, KernelSource::kMemory};
  }
  return impl_->load_slow(request);
}

Kernel Compiler::load_source(std::string_view source, const MacroMap& macros, KernelType kernel_type,
                             const std::vector<std::string>& include_dirs) {
  const std::filesystem::path path =
      impl_->cache.sources_dir() / (sha256_hex(source) + (kernel_type == KernelType::kCuda ? ".cu" : ".cpp"));
  // An identical file is never rewritten: that would change the stamps a concurrent builder of
  // the same source has taken, and its compile would fail as "changed while compiling". So a new
  // file is published only if no other thread or process did it first; only a file with other
  // contents (damaged, edited) is replaced.
  const std::optional<std::string> existing = read_file(path);
  if (!existing) {
    write_file_if_absent(impl_->cache.tmp_dir(), path, std::string(source));
  } else if (*existing != source) {
    write_file_atomically(impl_->cache.tmp_dir(), path, std::string(source));
  }
  return load(path.string(), macros, kernel_type, include_dirs);
}

std::string Compiler::kernel_id(std::string_view template_path, const MacroMap& macros, KernelType kernel_type,
                                const std::vector<std::string>& include_dirs) {
  return impl_->resolve({template_path, &macros, kernel_type, &include_dirs}).id;
}

CompilerStats Compiler::stats() const {
  CompilerStats s;
  s.memory_hits = impl_->memory_hits.load();
  s.disk_hits = impl_->disk_hits.load();
  s.compiles = impl_->compiles.load();
  s.rebuilt_bad_entries = impl_->rebuilt_bad_entries.load();
  s.evictions = impl_->evictions.load();
  s.compile_seconds = impl_->compile_seconds.load();
  return s;
}

const Config& Compiler::config() const { return impl_->config; }

DiskCache& Compiler::cache() { return impl_->cache; }

}  // namespace tg::jit
