#include "host_kernels.h"

namespace tg::sim {

const HostKernels& host_kernels() {
  static const HostKernels& best = [&]() -> const HostKernels& {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx512dq")) {
      return avx512_host_kernels();
    }
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c")) {
      return avx2_host_kernels();
    }
    return portable_host_kernels();
  }();
  return best;
}

}  // namespace tg::sim
