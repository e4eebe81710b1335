#include "tilegraph/backends.h"

#include <functional>
#include <mutex>
#include <utility>

#include "tilegraph/core/error.h"
#include "tilegraph/cpu/cpu_backend.h"
#include "tilegraph/runtime/reference_backend.h"

namespace tg {

namespace {

struct BackendEntry {
  std::string name;
  std::function<std::unique_ptr<Backend>(const BackendOptions&)> make;
};

struct Registry {
  std::mutex mutex;
  std::vector<BackendEntry> entries = {
      {"cpu", [](const BackendOptions& o) { return cpu::make_cpu_backend(o); }},
      {"reference", [](const BackendOptions&) { return make_reference_backend(); }},
  };
};

Registry& registry_state() {
  static Registry registry;
  return registry;
}

std::vector<BackendEntry> registry() {
  Registry& r = registry_state();
  std::lock_guard<std::mutex> lock(r.mutex);
  return r.entries;
}

}  // namespace

std::vector<std::string> backend_names() {
  std::vector<std::string> names;
  for (const BackendEntry& e : registry()) names.emplace_back(e.name);
  return names;
}

std::unique_ptr<Backend> make_backend(std::string_view name, const BackendOptions& options) {
  for (const BackendEntry& e : registry()) {
    if (e.name == name) return e.make(options);
  }
  std::string known;
  for (const BackendEntry& e : registry()) known += (known.empty() ? "" : ", ") + std::string(e.name);
  const std::string hint = name == "tx8" ? "; the tx8 backend is in programs that link the TX8 compiler (tilegraph "
                                           "run --backend tx8 runs tilegraph-tx8; configure with MLIR 15 to build it)"
                                         : "";
  throw Error("unknown backend '" + std::string(name) + "' (available: " + known + ")" + hint);
}

void register_backend(std::string_view name, std::function<std::unique_ptr<Backend>(const BackendOptions&)> make) {
  Registry& r = registry_state();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (const BackendEntry& e : r.entries) {
    if (e.name == name) return;
  }
  r.entries.push_back({std::string(name), std::move(make)});
}

}  // namespace tg
