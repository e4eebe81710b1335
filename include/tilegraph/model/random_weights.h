#pragma once
// Deterministic pseudo-random tensor contents (splitmix64 based, so the same seed gives the same
// weights on every platform and standard library).
#include <cstdint>

#include "tilegraph/core/tensor.h"

namespace tg::model {

// Uniform values in [-scale, scale) written in logical order into `t` (f32/f16/bf16 or quantized,
// with contiguous rows).
void fill_uniform(Tensor& t, uint64_t seed, float scale);

}  // namespace tg::model
