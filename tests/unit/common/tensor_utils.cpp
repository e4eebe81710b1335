#include "common/tensor_utils.h"

#include <cmath>
#include <limits>
#include <sstream>

#include "tilegraph/core/error.h"
#include "tilegraph/core/ops.h"

namespace tg::test {

namespace {

// Visits every row of `t` in logical order with the row's first-element pointer.
template <typename Fn>
void for_each_row(const Tensor& t, Fn&& fn) {
  for (int64_t i3 = 0; i3 < t.ne[3]; ++i3) {
    for (int64_t i2 = 0; i2 < t.ne[2]; ++i2) {
      for (int64_t i1 = 0; i1 < t.ne[1]; ++i1) fn(static_cast<char*>(t.element_ptr(0, i1, i2, i3)));
    }
  }
}

void require_rows_for_blocks(const Tensor& t) {
  if (is_quantized(t.type) && !t.has_contiguous_rows()) {
    throw Error("test helpers: quantized tensor without contiguous rows: " + describe(t));
  }
}

}  // namespace

void write_f32(Tensor& t, std::span<const float> values) {
  if (values.size() != size_t(t.nelements())) {
    throw Error("write_f32: " + std::to_string(values.size()) + " values for " + describe(t));
  }
  require_rows_for_blocks(t);
  const int64_t ne0 = t.ne[0];
  const float* v = values.data();
  for_each_row(t, [&](char* row) {
    if (is_quantized(t.type)) {
      row_from_f32(t.type, v, row, ne0);
    } else {
      for (int64_t i0 = 0; i0 < ne0; ++i0) row_from_f32(t.type, v + i0, row + i0 * t.nb[0], 1);
    }
    v += ne0;
  });
}

std::vector<float> read_f32(const Tensor& t) {
  require_rows_for_blocks(t);
  std::vector<float> out(size_t(t.nelements()));
  const int64_t ne0 = t.ne[0];
  float* v = out.data();
  for_each_row(t, [&](char* row) {
    if (is_quantized(t.type)) {
      row_to_f32(t.type, row, v, ne0);
    } else {
      for (int64_t i0 = 0; i0 < ne0; ++i0) row_to_f32(t.type, row + i0 * t.nb[0], v + i0, 1);
    }
    v += ne0;
  });
  return out;
}

void fill_uniform(Tensor& t, Rng& rng, float lo, float hi) {
  std::vector<float> values(size_t(t.nelements()));
  if (t.type == DType::I32) {
    std::uniform_int_distribution<int32_t> dist(int32_t(lo), int32_t(hi) - 1);
    for (float& v : values) v = float(dist(rng));
  } else {
    std::uniform_real_distribution<float> dist(lo, hi);
    for (float& v : values) v = dist(rng);
  }
  write_f32(t, values);
}

double nmse(std::span<const float> out, std::span<const float> ref) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (out.size() != ref.size()) return kInf;
  double err = 0.0, norm = 0.0;
  for (size_t i = 0; i < ref.size(); ++i) {
    if (!std::isfinite(out[i]) || !std::isfinite(ref[i])) {
      if (out[i] == ref[i] || (std::isnan(out[i]) && std::isnan(ref[i]))) continue;
      return kInf;
    }
    const double d = double(out[i]) - double(ref[i]);
    err += d * d;
    norm += double(ref[i]) * double(ref[i]);
  }
  return norm > 0.0 ? err / norm : err;
}

std::string describe_difference(std::span<const float> out, std::span<const float> ref) {
  std::ostringstream s;
  if (out.size() != ref.size()) {
    s << "size " << out.size() << " != " << ref.size();
    return s.str();
  }
  size_t worst = 0;
  double worst_diff = -1.0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const bool same = out[i] == ref[i] || (std::isnan(out[i]) && std::isnan(ref[i]));
    const double d = same                             ? 0.0
                     : std::isfinite(out[i] - ref[i]) ? std::fabs(out[i] - ref[i])
                                                      : std::numeric_limits<double>::infinity();
    if (d > worst_diff) {
      worst_diff = d;
      worst = i;
    }
  }
  if (ref.empty()) return "no elements";
  s << "max |out-ref| = " << worst_diff << " at " << worst << " (out " << out[worst] << ", ref " << ref[worst] << ")";
  return s.str();
}

std::string_view layout_name(Layout layout) {
  switch (layout) {
    case Layout::kContiguous: return "cont";
    case Layout::kPaddedRows: return "padded";
    case Layout::kPermuted: return "permuted";
    case Layout::kTransposed: return "transposed";
  }
  return "unknown-layout";
}

Tensor* new_tensor(Context& ctx, DType type, std::array<int64_t, 4> ne, Layout layout) {
  switch (layout) {
    case Layout::kContiguous: return ctx.new_tensor(type, ne);
    case Layout::kPaddedRows: {
      // Two extra blocks per row; the view starts one block in so neither end lines up.
      const int64_t block = int64_t(dtype_traits(type).block_size);
      Tensor* base = ctx.new_tensor(type, {ne[0] + 2 * block, ne[1], ne[2], ne[3]});
      return view_4d(ctx, base, ne[0], ne[1], ne[2], ne[3], base->nb[1], base->nb[2], base->nb[3],
                     dtype_traits(type).type_size);
    }
    case Layout::kPermuted: {
      Tensor* base = ctx.new_tensor(type, {ne[0], ne[2], ne[1], ne[3]});
      return permute(ctx, base, 0, 2, 1, 3);
    }
    case Layout::kTransposed: {
      Tensor* base = ctx.new_tensor(type, {ne[1], ne[0], ne[2], ne[3]});
      return transpose(ctx, base);
    }
  }
  throw Error("new_tensor: unknown layout");
}

}  // namespace tg::test
