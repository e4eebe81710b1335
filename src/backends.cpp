#include "tilegraph/backends.h"

#include <functional>

#include "tilegraph/core/error.h"
#include "tilegraph/cpu/cpu_backend.h"
#include "tilegraph/runtime/reference_backend.h"

namespace tg {

namespace {

struct BackendEntry {
  std::string_view name;
  std::function<std::unique_ptr<Backend>(const BackendOptions&)> make;
};

const std::vector<BackendEntry>& registry() {
  static const std::vector<BackendEntry> entries = {
      {"cpu", [](const BackendOptions& o) { return cpu::make_cpu_backend(o); }},
      {"reference", [](const BackendOptions&) { return make_reference_backend(); }},
  };
  return entries;
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
  throw Error("unknown backend '" + std::string(name) + "' (available: " + known + ")");
}

}  // namespace tg
