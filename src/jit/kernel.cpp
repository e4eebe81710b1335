#include "tilegraph/jit/kernel.h"

#include "tilegraph/core/error.h"

namespace tg::jit {

std::string_view to_string(KernelType type) {
  switch (type) {
    case KernelType::kCpu: return "cpu";
    case KernelType::kCuda: return "cuda";
  }
  return "?";
}

KernelType parse_kernel_type(std::string_view name) {
  if (name == "cpu") return KernelType::kCpu;
  if (name == "cuda") return KernelType::kCuda;
  throw Error("jit: unknown kernel type '" + std::string(name) + "' (expected cpu or cuda)");
}

std::string_view to_string(KernelSource source) {
  switch (source) {
    case KernelSource::kMemory: return "memory";
    case KernelSource::kDisk: return "disk";
    case KernelSource::kCompiled: return "compile";
  }
  return "?";
}

}  // namespace tg::jit
