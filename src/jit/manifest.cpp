#include "tilegraph/jit/manifest.h"

#include "escape.h"
#include "tilegraph/core/error.h"

namespace tg::jit {

namespace {

constexpr const char* kKeyFields[] = {"key_format", "inputs", "compiler", "flags"};

template <typename T>
T field(const nlohmann::json& json, const char* name) {
  const auto it = json.find(name);
  if (it == json.end()) throw Error(std::string("jit: manifest has no \"") + name + "\"");
  try {
    return it->get<T>();
  } catch (const nlohmann::json::exception&) {
    throw Error(std::string("jit: manifest field \"") + name + "\" has the wrong type");
  }
}

}  // namespace

nlohmann::json Manifest::to_json() const {
  nlohmann::json json = key;
  json["id"] = id;
  json["sha256"] = sha256;
  json["size"] = size;
  json["created"] = created_ms;
  json["last_used"] = last_used_ms;
  json["compile_seconds"] = compile_seconds;
  return json;
}

Manifest Manifest::from_json(const nlohmann::json& json) {
  if (!json.is_object()) throw Error("jit: manifest is not a JSON object");
  Manifest m;
  m.id = field<std::string>(json, "id");
  m.sha256 = field<std::string>(json, "sha256");
  m.size = field<uint64_t>(json, "size");
  m.created_ms = field<int64_t>(json, "created");
  m.last_used_ms = field<int64_t>(json, "last_used");
  m.compile_seconds = field<double>(json, "compile_seconds");
  m.key = nlohmann::json::object();
  for (const char* name : kKeyFields) m.key[name] = field<nlohmann::json>(json, name);
  return m;
}

std::string Manifest::template_path() const {
  const nlohmann::json inputs = key.value("inputs", nlohmann::json::object());
  const nlohmann::json source =
      inputs.is_object() ? inputs.value("template", nlohmann::json::object()) : nlohmann::json::object();
  return source.is_object() ? unescape_bytes(source.value("path", "")) : "";
}

std::string Manifest::macros() const {
  const nlohmann::json inputs = key.value("inputs", nlohmann::json::object());
  return inputs.is_object() ? inputs.value("macros", "") : "";
}

}  // namespace tg::jit
