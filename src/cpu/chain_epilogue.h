#pragma once
// The row ops of a matmul chain (fusion.h) applied to a block of the matmul's sums where the
// matmul left them: what both GEMMs (the float GEMM's epilogue, the integer GEMM after each
// finished tile) run, so that the chain's intermediate results never reach memory.
#include <cstdint>
#include <span>

#include "tilegraph/core/tensor.h"
#include "vec.h"

namespace tg::cpu {

// The block is rows [row0, row0 + rows) and columns [col0, col0 + cols) of batch (i2, i3) of
// `matmul`'s result, held at sums[r * ld + c]; the last of `ops` receives it. The sums may lie in
// that last result's own memory (the ops are elementwise: they then run in place).
void apply_matmul_chain(const Tensor& matmul, std::span<const Tensor* const> ops, const VecKernels& vec, int64_t i2,
                        int64_t i3, int64_t row0, int64_t rows, int64_t col0, int64_t cols, const float* sums,
                        int64_t ld);

}  // namespace tg::cpu
