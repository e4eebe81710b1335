// Test CUDA kernel template: a device kernel nvcc must compile, and a host entry point that the
// tests can call without a GPU (it launches nothing).
#include <cstdint>

#include "saxpy_params.h"

__global__ void fill(float* y, float value, int64_t n) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = value;
}

extern "C" void run(uint32_t block_num, void* stream, const void* params) {
  (void)block_num;
  (void)stream;
  const auto* p = static_cast<const SaxpyParams*>(params);
  for (int64_t i = 0; i < p->n; ++i) p->y[i] = float(VALUE);
}
