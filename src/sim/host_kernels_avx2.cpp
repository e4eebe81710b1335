// The avx2 host kernels (this file is compiled with that instruction set; src/sim/CMakeLists.txt).
#include "host_kernels_impl.h"

namespace tg::sim {

const HostKernels& avx2_host_kernels() { return make_host_kernels("avx2"); }

}  // namespace tg::sim
