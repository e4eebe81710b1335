#include "tilegraph/model/random_weights.h"

#include "tilegraph/core/error.h"

namespace tg::model {

namespace {

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace

UniformRows::UniformRows(DType type, int64_t ne0, uint64_t seed, float scale, float offset)
    : type_(type), state_(seed), scale_(scale), offset_(offset), values_(size_t(ne0)) {
  if (type == DType::I32) throw Error("uniform weights: needs a float or quantized type, not i32");
}

void UniformRows::next(void* out) {
  for (float& v : values_) {
    // 24 random bits -> [-1, 1)
    v = scale_ * (float(splitmix64(state_) >> 40) * (2.0f / 16777216.0f) - 1.0f);
  }
  if (offset_ != 0.0f) {
    for (float& v : values_) v += offset_;
  }
  row_from_f32(type_, values_.data(), out, int64_t(values_.size()));
}

void fill_uniform(Tensor& t, uint64_t seed, float scale, float offset) {
  if (!t.data) throw Error("fill_uniform: tensor has no data");
  if (!t.has_contiguous_rows() || t.type == DType::I32) {
    throw Error("fill_uniform: needs a float or quantized tensor with contiguous rows: " + describe(t));
  }
  UniformRows rows(t.type, t.ne[0], seed, scale, offset);
  for (int64_t i3 = 0; i3 < t.ne[3]; ++i3) {
    for (int64_t i2 = 0; i2 < t.ne[2]; ++i2) {
      for (int64_t i1 = 0; i1 < t.ne[1]; ++i1) rows.next(t.element_ptr(0, i1, i2, i3));
    }
  }
}

void UniformWeights::generate(DType type, int64_t ne0, int64_t rows,
                              const std::function<void(const void*, size_t)>& put) const {
  UniformRows generator(type, ne0, seed, scale, offset);
  std::vector<uint8_t> row(row_size(type, ne0));
  for (int64_t r = 0; r < rows; ++r) {
    generator.next(row.data());
    put(row.data(), row.size());
  }
}

}  // namespace tg::model
