// The matrix-vector path of the MUL_MAT fallback (matmul_fallback.h): one dot product per row of
// a and column of b, a read once.
#include <type_traits>

#include "interleaved_rows.h"
#include "matmul_fallback.h"
#include "prepared_weights.h"

namespace tg::cpu {

namespace {

// The activation formats (quant.h) as the vector tables quantize them.
void quantize_activations(const VecKernels& vec, int64_t n, BlockQ8_K* y, const float* x) { vec.quantize_q8k(n, y, x); }
void quantize_activations(const VecKernels& vec, int64_t n, BlockQ8_32* y, const float* x) {
  vec.quantize_q8_32(n, y, x);
}

// b's rows as contiguous f32 activations of weights of `weight_type`: in place when they already
// are, else converted once per node into shared scratch (laid out contiguously as [K, N, B2, B3]).
class FloatRows {
 public:
  FloatRows(const Tensor& b, DType weight_type, ExecContext& exec) : b_(b) {
    const bool rounds = activation_type(weight_type) == ActivationType::BF16;
    if (b.type == DType::F32 && b.nb[0] == sizeof(float) && b.nb[1] % sizeof(float) == 0 && !rounds) return;
    const int64_t k = b.ne[0];
    converted_ = static_cast<float*>(exec.shared_scratch(size_t(b.nelements()) * sizeof(float)));
    const VecKernels& vec = exec.vec();
    exec.parallel_range(b.nrows(), k, [&](const ThreadContext& tc, int64_t begin, int64_t end) {
      auto* bits = static_cast<uint16_t*>(tc.scratch.bytes(size_t(k) * sizeof(uint16_t)));
      int64_t r = begin;
      for_each_row(b, begin, end, [&](int64_t i1, int64_t i2, int64_t i3) {
        float* row = converted_ + r++ * k;
        if (const float* x = read_activation_row(vec, weight_type, b, i1, i2, i3, row, bits); x != row) {
          std::copy_n(x, k, row);
        }
      });
    });
  }

  const float* row(int64_t n, int64_t i2, int64_t i3) const {
    if (!converted_) return reinterpret_cast<const float*>(row_ptr(b_, n, i2, i3));
    return converted_ + ((i3 * b_.ne[2] + i2) * b_.ne[1] + n) * b_.ne[0];
  }
  // Floats from row n to row n + 1 of one batch.
  int64_t row_stride() const { return converted_ ? b_.ne[0] : int64_t(b_.nb[1] / sizeof(float)); }

 private:
  const Tensor& b_;
  float* converted_ = nullptr;
};

// b's rows in an 8-bit activation format (BlockQ8_K or BlockQ8_32), [K / block, N, B2, B3]
// blocks: the matrix-vector path of quantized weights.
template <class Block>
class Int8Rows {
 public:
  Int8Rows(const Tensor& b, ExecContext& exec) : b_(b), blocks_(b.ne[0] / int64_t(sizeof(Block::qs))) {
    const VecKernels& vec = exec.vec();
    data_ = reinterpret_cast<Block*>(
        quantize_rows(b, size_t(blocks_) * sizeof(Block), exec, [&](int64_t k, const float* x, uint8_t* out) {
          quantize_activations(vec, k, reinterpret_cast<Block*>(out), x);
        }));
  }

  const Block* row(int64_t n, int64_t i2, int64_t i3) const {
    return data_ + ((i3 * b_.ne[2] + i2) * b_.ne[1] + n) * blocks_;
  }
  // Blocks from row n to row n + 1 of one batch.
  int64_t row_stride() const { return blocks_; }

 private:
  const Tensor& b_;
  int64_t blocks_;
  Block* data_;
};

// One dot product per row of a and column of b (several columns: quantized a with contiguous
// blocks only). x_rows: FloatRows, or Int8Rows for the types that take 8-bit activations.
template <class Rows>
void mat_vec_rows(const Tensor& node, const Tensor& a, const Rows& x_rows, ExecContext& exec) {
  const VecKernels& vec = exec.vec();
  const int64_t k = a.ne[0], m_len = a.ne[1], tokens = node.ne[1];
  const int64_t batches = node.ne[2] * node.ne[3];
  const int64_t out_stride = int64_t(node.nb[1] / sizeof(float));
  const Broadcast bc(a, *node.src[1]);
  const bool direct = a.nb[0] == dtype_traits(a.type).type_size;
  const int row_streams = matvec_row_streams();
  exec.parallel_range(m_len * batches, k, [&](const ThreadContext& tc, int64_t begin, int64_t end) {
    float* buf = nullptr;
    void* dot_scratch = nullptr;
    if constexpr (std::is_same_v<Rows, Int8Rows<BlockQ8_32>>) {
      dot_scratch = tc.scratch.bytes(dot_q8_32_scratch_bytes(k, tokens));
    } else if (!direct) {
      buf = tc.scratch.floats(size_t(k));
    }
    // Runs of consecutive rows of a within one batch, each written to consecutive outputs.
    for (int64_t r = begin; r < end;) {
      const int64_t m = r % m_len, i2 = r / m_len % node.ne[2], i3 = r / m_len / node.ne[2];
      const int64_t count = std::min(end - r, m_len - m);
      const auto* x = x_rows.row(0, i2, i3);
      const char* rows = row_ptr(a, m, i2 / bc.r2, i3 / bc.r3);
      const int64_t stride = int64_t(a.nb[1]);
      float* out = output_at(node, m, 0, i2, i3);
      if constexpr (std::is_same_v<Rows, Int8Rows<BlockQ8_K>>) {
        vec.dot_q8k_rows(a.type, k, count, rows, a.nb[1], tokens, x, x_rows.row_stride(), out, out_stride, row_streams);
      } else if constexpr (std::is_same_v<Rows, Int8Rows<BlockQ8_32>>) {
        vec.dot_q8_32_rows(a.type, k, count, rows, a.nb[1], tokens, x, x_rows.row_stride(), out, out_stride,
                           row_streams, dot_scratch);
      } else if (!direct) {
        for (int64_t j = 0; j < count; ++j) {
          load_f32(vec, a.type, rows + j * stride, a.nb[0], k, buf);
          out[j] = vec.dot_f32(k, buf, x);
        }
      } else {
        vec.dot_rows(a.type, k, count, rows, a.nb[1], x, out);
      }
      r += count;
    }
  });
}

// One token against an interleaved copy of a (prepared_weights.h): groups of 16 rows, each a
// sequential run of the copy.
template <class Block>
void mat_vec_interleaved(const Tensor& node, const InterleavedMatrix& a, const Int8Rows<Block>& x_rows,
                         ExecContext& exec) {
  const VecKernels& vec = exec.vec();
  const int64_t groups = interleaved_groups(a.rows);
  const size_t group_bytes = interleaved_bytes(a.type, a.n, kInterleavedRows);
  const Block* x = x_rows.row(0, 0, 0);
  float* out = output_at(node, 0, 0, 0, 0);
  exec.parallel_range(groups, a.n * kInterleavedRows, [&](const ThreadContext& tc, int64_t begin, int64_t end) {
    void* scratch = tc.scratch.bytes(dot_q8_32_scratch_bytes(a.n, 1));
    const int64_t first = begin * kInterleavedRows;
    const int64_t rows = std::min(end * kInterleavedRows, a.rows) - first;
    vec.dot_interleaved_rows(a.type, a.n, rows, a.groups + size_t(begin) * group_bytes, x, out + first, scratch);
  });
}

// Quantized a against b in Block's 8-bit format: one token of one batch reads a's interleaved
// copy when it has one (prepared_weights.h), everything else the stored rows.
template <class Block>
void mat_vec_int8(const Tensor& node, const Tensor& a, const Tensor& b, ExecContext& exec) {
  const bool one_token = node.ne[1] == 1 && node.ne[2] == 1 && node.ne[3] == 1;
  if (const InterleavedMatrix* copy = one_token ? find_interleaved(a) : nullptr) {
    return mat_vec_interleaved(node, *copy, Int8Rows<Block>(b, exec), exec);
  }
  mat_vec_rows(node, a, Int8Rows<Block>(b, exec), exec);
}

}  // namespace

void mat_vec(const Tensor& node, const Tensor& a, const Tensor& b, ExecContext& exec) {
  // (A quantized a always has contiguous blocks: permute keeps its dimension 0 in place.)
  switch (activation_type(a.type)) {
    case ActivationType::Q8_K: return mat_vec_int8<BlockQ8_K>(node, a, b, exec);
    case ActivationType::Q8_32: return mat_vec_int8<BlockQ8_32>(node, a, b, exec);
    case ActivationType::F32:
    case ActivationType::BF16: return mat_vec_rows(node, a, FloatRows(b, a.type, exec), exec);
  }
}

}  // namespace tg::cpu
