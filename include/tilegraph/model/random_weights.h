#pragma once
// Deterministic pseudo-random tensor contents (splitmix64 based, so the same seed gives the same
// weights on every platform and standard library).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "tilegraph/core/tensor.h"

namespace tg::model {

// Uniform values in [-scale, scale), plus `offset`, written in logical order into `t`
// (f32/f16/bf16 or quantized, with contiguous rows).
void fill_uniform(Tensor& t, uint64_t seed, float scale, float offset = 0.0f);

// The rows fill_uniform writes, one at a time, each with `offset` added before it is converted
// to `type`: a tensor can be generated in pieces (into a file larger than memory) with the same
// bytes as in one piece.
class UniformRows {
 public:
  UniformRows(DType type, int64_t ne0, uint64_t seed, float scale, float offset = 0.0f);
  // Writes the next row, row_size(type, ne0) bytes, to `out`.
  void next(void* out);

 private:
  DType type_;
  uint64_t state_;
  float scale_;
  float offset_;
  std::vector<float> values_;
};

// A generated weight's contents: fill_uniform's values for `seed` and `scale`, plus `offset`
// (norm gains sit near 1).
struct UniformWeights {
  uint64_t seed = 0;
  float scale = 1.0f;
  float offset = 0.0f;

  // The bytes of a contiguous tensor of `type` with `rows` rows of `ne0` elements, a row at a
  // time through `put`.
  void generate(DType type, int64_t ne0, int64_t rows, const std::function<void(const void*, size_t)>& put) const;
  // The same values in `t` (fill_uniform).
  void fill(Tensor& t) const { fill_uniform(t, seed, scale, offset); }
};

// A tensor of a generated model and its contents. Generated models list their tensors this way
// (make_block_weights, LlamaModel::generate), so that the same recipe fills them in memory or, as
// headers without data, streams them into a file (LlamaModel::generate_gguf).
struct GeneratedTensor {
  Tensor* tensor;
  UniformWeights contents;
};

}  // namespace tg::model
