#include "tilegraph/model/random_weights.h"

#include <vector>

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

void fill_uniform(Tensor& t, uint64_t seed, float scale) {
  if (!t.data) throw Error("fill_uniform: tensor has no data");
  if (!t.has_contiguous_rows() || t.type == DType::I32) {
    throw Error("fill_uniform: needs a float or quantized tensor with contiguous rows: " + describe(t));
  }
  uint64_t state = seed;
  std::vector<float> row(size_t(t.ne[0]));
  for (int64_t i3 = 0; i3 < t.ne[3]; ++i3) {
    for (int64_t i2 = 0; i2 < t.ne[2]; ++i2) {
      for (int64_t i1 = 0; i1 < t.ne[1]; ++i1) {
        for (float& v : row) {
          // 24 random bits -> [-1, 1)
          v = scale * (float(splitmix64(state) >> 40) * (2.0f / 16777216.0f) - 1.0f);
        }
        row_from_f32(t.type, row.data(), t.element_ptr(0, i1, i2, i3), t.ne[0]);
      }
    }
  }
}

}  // namespace tg::model
