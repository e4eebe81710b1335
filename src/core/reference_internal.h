#pragma once
// Pieces shared by the reference implementation files (reference*.cpp): layout-independent row
// access, the softmax and ALiBi definitions used by more than one op, and one entry point per op.
//
// Precision policy: elements are read as f32 and results rounded to the destination type once;
// sums and dot products accumulate in double; softmax-like normalisations and rope angles are
// evaluated in double (they feed exp/cos of large arguments, where f32 error would dominate the
// backends' error budget); everything else is computed in f32, as ggml does.
#include <cstdint>
#include <span>
#include <vector>

#include "tilegraph/core/reference.h"
#include "tilegraph/core/tensor.h"

namespace tg::reference::detail {

// Quantized types are stored in blocks (32 or 256 elements) and every other type in single
// elements. nb[0] is the byte stride between these storage units, so units are addressed exactly
// like elements.
int64_t unit_elems(DType type);
size_t unit_bytes(DType type);
char* row_ptr(const Tensor& t, int64_t i1, int64_t i2, int64_t i3);

// Row (i1, i2, i3) of `t` as t.ne[0] floats, and back (rounding to t's type).
void read_row(const Tensor& t, int64_t i1, int64_t i2, int64_t i3, float* out);
void write_row(const Tensor& t, int64_t i1, int64_t i2, int64_t i3, const float* in);
// Copies a row between tensors with equal ne[0]: bit-exact when the types match (so i32 values
// beyond 2^24 survive), converting through f32 otherwise.
void copy_row(const Tensor& src, int64_t s1, int64_t s2, int64_t s3, const Tensor& dst, int64_t d1, int64_t d2,
              int64_t d3);
// The whole tensor as f32 in logical order (dimension 0 fastest), and back.
std::vector<float> read_all(const Tensor& t);
void write_all(const Tensor& t, std::span<const float> values);
int32_t read_i32(const Tensor& t, int64_t i0, int64_t i1 = 0, int64_t i2 = 0, int64_t i3 = 0);

template <typename Fn>
void for_each_row(const Tensor& t, Fn&& fn) {
  for (int64_t i3 = 0; i3 < t.ne[3]; ++i3) {
    for (int64_t i2 = 0; i2 < t.ne[2]; ++i2) {
      for (int64_t i1 = 0; i1 < t.ne[1]; ++i1) fn(i1, i2, i3);
    }
  }
}

// Turns scores into probabilities in place. A row whose scores are all -inf (fully masked)
// becomes all zeros rather than ggml's NaN, so masked padding rows stay finite.
void softmax_in_place(std::span<double> scores);

void mul_mat(const Tensor& node);
void binary(const Tensor& node);
void scale(const Tensor& node);
void unary(const Tensor& node);
void glu(const Tensor& node);
void norm(const Tensor& node);
void rms_norm(const Tensor& node);
void soft_max(const Tensor& node);
void sum_rows(const Tensor& node);
void argmax(const Tensor& node);
void rope(const Tensor& node);
void flash_attn_ext(const Tensor& node);
void get_rows(const Tensor& node);
void set_rows(const Tensor& node);
void copy(const Tensor& node);
void concat(const Tensor& node);
void conv_2d(const Tensor& node);
void pool_2d(const Tensor& node);
void batch_norm(const Tensor& node);

}  // namespace tg::reference::detail
