#pragma once
// The params struct shared by the saxpy test kernel and the tests that call it (torch_catlass's
// MatmulParams role: the ABI passes it as const void*).
#include <cstdint>

struct SaxpyParams {
  int64_t n;
  const float* x;
  float* y;
};
