#pragma once
// The manifest stored next to each cached kernel (<id>.json beside <id>.so): what the kernel was
// built from, by what, and the hash its file must still have to be loaded.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace tg::jit {

struct Manifest {
  std::string id;
  // key_material(): {"key_format", "inputs", "compiler", "flags"}; its SHA-256 is the id.
  nlohmann::json key;
  std::string sha256;        // of <id>.so
  uint64_t size = 0;         // of <id>.so, in bytes
  int64_t created_ms = 0;    // Unix time in milliseconds
  int64_t last_used_ms = 0;  // last load from disk by any process (the LRU order)
  double compile_seconds = 0;

  // The key's fields at the top level, then id, sha256, size, created, last_used,
  // compile_seconds.
  nlohmann::json to_json() const;
  // Throws tg::Error naming the missing or mistyped field.
  static Manifest from_json(const nlohmann::json& json);

  // From the key, for listings: the template's path (as the bytes it is, unescaped) and the
  // canonical macro string (macros.h).
  std::string template_path() const;
  std::string macros() const;
};

}  // namespace tg::jit
