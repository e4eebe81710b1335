#include "tilegraph/jit/kernel_id.h"

#include "escape.h"
#include "tilegraph/core/error.h"
#include "tilegraph/jit/macros.h"
#include "tilegraph/jit/sha256.h"

namespace tg::jit {

namespace {

// Bumped whenever the meaning of the key changes, so old entries can never match new requests.
// 2: paths, flags and the compiler's version are stored escaped (escape_bytes).
constexpr int kKeyFormat = 2;

nlohmann::json digest_json(const SourceDigest& digest) {
  return {{"path", escape_bytes(digest.path)}, {"sha256", digest.sha256}};
}

}  // namespace

nlohmann::json key_material(const KernelKeyInputs& inputs) {
  nlohmann::json headers = nlohmann::json::array();
  for (const SourceDigest& header : inputs.headers) headers.push_back(digest_json(header));
  nlohmann::json flags = nlohmann::json::array();
  for (const std::string& flag : inputs.flags) flags.push_back(escape_bytes(flag));
  return {
      {"key_format", kKeyFormat},
      {"inputs",
       {{"macros", canonical_macros(inputs.macros, inputs.arch, inputs.kernel_type)},
        {"template", digest_json(inputs.template_source)},
        {"headers", std::move(headers)},
        {"tilegraph", inputs.tilegraph_version}}},
      {"compiler", {{"path", escape_bytes(inputs.compiler_path)}, {"version", escape_bytes(inputs.compiler_version)}}},
      {"flags", std::move(flags)},
  };
}

std::string kernel_id(const KernelKeyInputs& inputs) { return kernel_id(key_material(inputs)); }

std::string kernel_id(const nlohmann::json& key_material) {
  try {
    return sha256_hex(key_material.dump());
  } catch (const nlohmann::json::exception& e) {
    throw Error(std::string("jit: the kernel key is not valid UTF-8: ") + e.what());
  }
}

}  // namespace tg::jit
