#pragma once
// The CPU backend: a thread pool and a kernel for every op, vectorised with AVX2/AVX-512 where
// the CPU has them (chosen at run time), and a portable path everywhere else.
#include <memory>
#include <string>
#include <vector>

#include "tilegraph/runtime/backend.h"

namespace tg::cpu {

// Who made the CPU: the kernels' memory-access tuning differs (vec.h, matvec_row_streams; gemm.h,
// gemm_tuning).
enum class CpuVendor { OTHER, INTEL, AMD };

struct CpuFeatures {
  CpuVendor vendor = CpuVendor::OTHER;
  // The family cpuid reports (base plus extended): AMD's Zen 3 and Zen 4 are 25, Zen 5 is 26.
  int family = 0;
  bool sse42 = false, avx = false, avx2 = false, fma = false, f16c = false;
  bool avx512f = false, avx512bw = false, avx512vl = false, avx512dq = false, avx512_vnni = false, avx512_bf16 = false;
  bool amx_tile = false, amx_bf16 = false, amx_int8 = false;
};
// Detected once: cpuid, the OS's support for the register state, and (Linux) the process's
// permission to use AMX's tile data, which detection requests.
const CpuFeatures& cpu_features();
struct NamedCpuFeature {
  const char* name;  // "AVX-512F", for people
  const char* key;   // "avx512f", for JSON
  bool present;
};
// Every feature of CpuFeatures, in the order of the struct.
std::vector<NamedCpuFeature> named_cpu_features();
// The present ones' names: "AVX2 FMA F16C AVX-512F ..." for reports.
std::string cpu_features_string();

// The kernel table make_cpu_backend() picks for this CPU ("avx512_bf16", "amx", ...) and, per
// matrix-product path, the kernel it runs there: for `tilegraph info`.
struct CpuKernelChoice {
  const char* path;  // "float GEMM", "quantized prefill", ...
  std::string kernel;
};
std::string cpu_kernel_table();
std::vector<CpuKernelChoice> cpu_kernel_choices();

std::unique_ptr<Backend> make_cpu_backend(const BackendOptions& options = {});

}  // namespace tg::cpu
