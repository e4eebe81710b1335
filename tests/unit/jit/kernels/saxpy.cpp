// Test kernel template: y[i] = SCALE * x[i] + y[i], the n elements split into block_num blocks
// as a device kernel would split them over cores.
#include <cstdint>

#include "saxpy_params.h"

#ifndef SCALE
#error "SCALE must be defined"
#endif

extern "C" void run(uint32_t block_num, void* stream, const void* params) {
  (void)stream;
  const auto* p = static_cast<const SaxpyParams*>(params);
  const int64_t per_block = (p->n + block_num - 1) / block_num;
  for (uint32_t block = 0; block < block_num; ++block) {
    const int64_t begin = block * per_block;
    const int64_t end = begin + per_block < p->n ? begin + per_block : p->n;
    for (int64_t i = begin; i < end; ++i) p->y[i] = float(SCALE) * p->x[i] + p->y[i];
  }
}
