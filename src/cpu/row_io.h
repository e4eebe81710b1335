#pragma once
// Row access for kernels: rows of any dtype and any strides as f32, and back. A "row" is the
// ne[0] elements at (i1, i2, i3); elements are nb[0] bytes apart (blocks, for quantized types). Rows
// that already are contiguous f32 are used in place, so the common case copies nothing.
#include <cstddef>
#include <cstdint>

#include "kernels.h"
#include "tilegraph/core/tensor.h"
#include "vec.h"

namespace tg::cpu {

inline char* row_ptr(const Tensor& t, int64_t i1, int64_t i2, int64_t i3) {
  return static_cast<char*>(t.data) + i1 * int64_t(t.nb[1]) + i2 * int64_t(t.nb[2]) + i3 * int64_t(t.nb[3]);
}

inline bool is_f32_row_contiguous(const Tensor& t) { return t.type == DType::F32 && t.nb[0] == sizeof(float); }

// n elements of `type` starting at src, `stride` bytes apart (per block for quantized types), to
// f32.
void load_f32(const VecKernels& vec, DType type, const char* src, size_t stride, int64_t n, float* dst);
// The reverse, rounding to `type` (i32: to nearest; quantized types: per block, as quant.h says).
void store_f32(const VecKernels& vec, DType type, const float* src, char* dst, size_t stride, int64_t n);

// Row (i1, i2, i3) of t as f32: the row itself when it is contiguous f32, else converted into
// buf (t.ne[0] floats).
inline const float* read_row_f32(const VecKernels& vec, const Tensor& t, int64_t i1, int64_t i2, int64_t i3,
                                 float* buf) {
  const char* row = row_ptr(t, i1, i2, i3);
  if (is_f32_row_contiguous(t)) return reinterpret_cast<const float*>(row);
  load_f32(vec, t.type, row, t.nb[0], t.ne[0], buf);
  return buf;
}

// Where a kernel should compute f32 row (i1, i2, i3) of t: the row itself when it is contiguous
// f32, else buf. Pass the result to finish_row_f32 afterwards.
inline float* output_row_f32(const Tensor& t, int64_t i1, int64_t i2, int64_t i3, float* buf) {
  return is_f32_row_contiguous(t) ? reinterpret_cast<float*>(row_ptr(t, i1, i2, i3)) : buf;
}

// Stores a row computed at `values` (from output_row_f32) into t, converting if needed.
inline void finish_row_f32(const VecKernels& vec, const Tensor& t, int64_t i1, int64_t i2, int64_t i3,
                           const float* values) {
  char* row = row_ptr(t, i1, i2, i3);
  if (reinterpret_cast<const char*>(values) == row) return;
  store_f32(vec, t.type, values, row, t.nb[0], t.ne[0]);
}

// Calls fn(i1, i2, i3) for rows [begin, end) of t, numbered in logical order (i1 fastest).
template <class Fn>
inline void for_each_row(const Tensor& t, int64_t begin, int64_t end, Fn&& fn) {
  // Three 64-bit divisions cost ~40 ns, a third of a small node's dispatch: skip them for the
  // common single-task case.
  int64_t i1 = 0, i2 = 0, i3 = 0;
  if (begin != 0) {
    i1 = begin % t.ne[1];
    i2 = begin / t.ne[1] % t.ne[2];
    i3 = begin / (t.ne[1] * t.ne[2]);
  }
  for (int64_t r = begin; r < end; ++r) {
    fn(i1, i2, i3);
    if (++i1 == t.ne[1]) {
      i1 = 0;
      if (++i2 == t.ne[2]) {
        i2 = 0;
        ++i3;
      }
    }
  }
}

// Copies `units` storage units (elements, or quantized blocks) of `unit_bytes` each between strided
// locations, bit-exactly.
void copy_units(char* dst, size_t dst_stride, const char* src, size_t src_stride, int64_t units, size_t unit_bytes);

// Every row of t read as f32 and handed to convert(k, x, out) with its own `row_bytes` of `out`,
// rows in logical order ([B3, B2, N]), over exec's threads: the activations of a MUL_MAT turned
// into the format its weights multiply them in (8-bit blocks, bf16).
template <class Convert>
void convert_rows(const Tensor& t, uint8_t* out, size_t row_bytes, ExecContext& exec, Convert convert) {
  const int64_t k = t.ne[0];
  const VecKernels& vec = exec.vec();
  exec.parallel_range(t.nrows(), k, [&](const ThreadContext& tc, int64_t begin, int64_t end) {
    float* buf = tc.scratch.floats(size_t(k));
    int64_t r = begin;
    for_each_row(t, begin, end, [&](int64_t i1, int64_t i2, int64_t i3) {
      convert(k, read_row_f32(vec, t, i1, i2, i3, buf), out + size_t(r++) * row_bytes);
    });
  });
}

}  // namespace tg::cpu
