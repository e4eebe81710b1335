#pragma once
// Helpers shared by the unit tests: seeded random fills, reading tensors back as f32, the
// normalised error used to compare backends, and non-contiguous layouts of a logical shape.
#include <array>
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "tilegraph/core/context.h"
#include "tilegraph/core/tensor.h"

namespace tg::test {

using Rng = std::mt19937;

// Fills `t` (any dtype, any strides) with uniform values in [lo, hi), element by element in
// logical order, so that the same seed gives the same logical content whatever the layout. i32
// tensors get integers in [lo, hi). Quantized tensors need contiguous rows and are quantized per
// row.
void fill_uniform(Tensor& t, Rng& rng, float lo = -1.0f, float hi = 1.0f);
// Writes `values` (logical order, dimension 0 fastest) into `t`, converting to its dtype.
void write_f32(Tensor& t, std::span<const float> values);
// `t` in logical order as f32: quantized types dequantized, i32 by value.
std::vector<float> read_f32(const Tensor& t);

// sum (out - ref)^2 / sum ref^2 (the plain sum when ref is all zeros). Non-finite values must
// match exactly (same infinity, or both NaN); any other mismatch gives +inf.
double nmse(std::span<const float> out, std::span<const float> ref);
// "max |out-ref| = 0.25 at 17 (out 1.5, ref 1.25)" for failure messages.
std::string describe_difference(std::span<const float> out, std::span<const float> ref);

// How a test tensor is laid out in memory; every layout has the same logical shape.
enum class Layout {
  kContiguous,
  kPaddedRows,  // rows contiguous but further apart than their length, data not at offset 0
  kPermuted,    // dims 1 and 2 swapped in memory (ne1 stride smaller than ne2 stride)
  kTransposed,  // dims 0 and 1 swapped in memory: elements of a row are strided (not quantized)
};
std::string_view layout_name(Layout layout);
// A tensor of logical shape `ne` with the given layout; non-contiguous ones are views of a larger
// or reordered base tensor created in the same context.
Tensor* new_tensor(Context& ctx, DType type, std::array<int64_t, 4> ne, Layout layout = Layout::kContiguous);

}  // namespace tg::test
