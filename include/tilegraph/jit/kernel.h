#pragma once
// The JIT kernel ABI (torch_catlass's JitEntryFn): every kernel template defines
//   extern "C" void run(uint32_t block_num, void* stream, const void* params);
// `params` points at a struct the caller and the template agree on; the template casts it back.
// Templates are specialised with preprocessor macros, so a kernel is named by its template, its
// macros and its kernel type.
#include <cstdint>
#include <string>
#include <string_view>

namespace tg::jit {

using EntryFn = void (*)(uint32_t block_num, void* stream, const void* params);

// Which toolchain builds the template: the host C++ compiler, or nvcc for a CUDA source.
enum class KernelType { kCpu, kCuda };

std::string_view to_string(KernelType type);
// "cpu" or "cuda"; anything else throws tg::Error listing both.
KernelType parse_kernel_type(std::string_view name);

// Where a kernel came from on this lookup.
enum class KernelSource { kMemory, kDisk, kCompiled };

// "memory", "disk" or "compile".
std::string_view to_string(KernelSource source);

struct Kernel {
  EntryFn entry = nullptr;
  std::string id;  // 64 hex digits (docs/jit.md, "The kernel id")
  KernelSource source = KernelSource::kCompiled;
};

}  // namespace tg::jit
