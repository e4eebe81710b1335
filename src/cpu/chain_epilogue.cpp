#include "chain_epilogue.h"

#include "row_io.h"
#include "row_ops.h"

namespace tg::cpu {

void apply_matmul_chain(const Tensor& matmul, std::span<const Tensor* const> ops, const VecKernels& vec, int64_t i2,
                        int64_t i3, int64_t row0, int64_t rows, int64_t col0, int64_t cols, const float* sums,
                        int64_t ld) {
  const Tensor& last = *ops.back();
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t i1 = row0 + r;
    float* out = reinterpret_cast<float*>(row_ptr(last, i1, i2, i3)) + col0;
    const float* x = sums + r * ld;
    const Tensor* value = &matmul;
    for (const Tensor* op : ops) {
      apply_segment(*op, chain_value_slot(*op, *value), vec, out, x, col0, cols, i1, i2, i3);
      x = out;
      value = op;
    }
  }
}

}  // namespace tg::cpu
