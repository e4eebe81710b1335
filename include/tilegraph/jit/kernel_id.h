#pragma once
// The kernel id: SHA-256 over everything that decides what the compiler produces. torch_catlass
// hashes the sorted macros, the arch and the kernel type; that alone would load a stale kernel
// after the template, one of its headers, the compiler or the flags changed, so the key here
// also carries the template and every header it includes (by content), the compiler's path and
// version, the full flag vector and the tilegraph version.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tilegraph/jit/kernel.h"
#include "tilegraph/jit/macros.h"

namespace tg::jit {

struct SourceDigest {
  std::string path;
  std::string sha256;  // of the file's content
};

struct KernelKeyInputs {
  MacroMap macros;
  std::string arch;  // "x86_64", "sm_75", ...
  KernelType kernel_type = KernelType::kCpu;
  SourceDigest template_source;
  std::vector<SourceDigest> headers;  // every file the template includes, directly or not
  std::string compiler_path;
  std::string compiler_version;    // the compiler's --version output
  std::vector<std::string> flags;  // every argument but the output and the template
  std::string tilegraph_version = TG_VERSION;
};

// The canonical JSON form of the inputs (sorted keys), stored in each entry's manifest so the id
// can be recomputed from it: {"key_format", "inputs": {"macros" (torch_catlass's key=value& string,
// arch and kernel type included), "template", "headers", "tilegraph"}, "compiler": {"path",
// "version"}, "flags"}. Paths, flags and the version may hold any bytes: they are stored with
// '%' and every byte outside valid UTF-8 written as %XX, so any input gives a valid document
// and different inputs different ones.
nlohmann::json key_material(const KernelKeyInputs& inputs);

// SHA-256 of key_material(inputs).dump(): 64 lowercase hex digits.
std::string kernel_id(const KernelKeyInputs& inputs);
std::string kernel_id(const nlohmann::json& key_material);

}  // namespace tg::jit
