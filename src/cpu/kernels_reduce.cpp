// Row reductions: sum_rows and argmax.
#include <cmath>
#include <cstring>

#include "kernels.h"
#include "row_io.h"
#include "tilegraph/core/reference.h"

namespace tg::cpu {

void run_sum_rows(const Tensor& node, ExecContext& exec) {
  const Tensor& a = *node.src[0];
  const VecKernels& vec = exec.vec();
  const int64_t n = a.ne[0];
  exec.parallel_range(node.nrows(), n, [&](const ThreadContext& tc, int64_t begin, int64_t end) {
    float* buf = tc.scratch.floats(size_t(n));
    for_each_row(node, begin, end, [&](int64_t i1, int64_t i2, int64_t i3) {
      const float total = vec.sum(n, read_row_f32(vec, a, i1, i2, i3, buf));
      std::memcpy(row_ptr(node, i1, i2, i3), &total, sizeof total);
    });
  });
}

void run_argmax(const Tensor& node, ExecContext& exec) {
  const Tensor& a = *node.src[0];
  const VecKernels& vec = exec.vec();
  const int64_t n = a.ne[0];
  exec.parallel_range(a.ne[1], n, [&](const ThreadContext& tc, int64_t begin, int64_t end) {
    float* buf = tc.scratch.floats(size_t(n));
    for (int64_t i1 = begin; i1 < end; ++i1) {
      const float* x = read_row_f32(vec, a, i1, 0, 0, buf);
      // The first maximum, NaNs skipped, as ops.h asks: a vector max, then a scan that stops at
      // it. The vector max is only right for a row without NaN (a max instruction passes on or
      // drops a NaN depending on its operand order, so which lanes forget what depends on the
      // ISA), which the row's sum tells; other rows take the scalar loop.
      int32_t index = 0;
      if (!std::isnan(vec.sum(n, x))) {
        const float best = vec.max(n, x);
        while (index < n - 1 && !(x[index] == best)) ++index;
      } else {
        index = reference::argmax_row(x, n);
      }
      std::memcpy(static_cast<char*>(node.data) + i1 * node.nb[0], &index, sizeof index);
    }
  });
}

}  // namespace tg::cpu
