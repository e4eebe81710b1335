// Data movement: get_rows, set_rows, cpy/cont and concat.
#include <algorithm>
#include <cstring>
#include <string>

#include "kernels.h"
#include "row_io.h"
#include "tilegraph/core/error.h"
#include "tilegraph/core/quant.h"

namespace tg::cpu {

namespace {

int32_t read_index(const Tensor& idx, int64_t i, int64_t j, int64_t k) {
  int32_t value;
  std::memcpy(&value, idx.element_ptr(i, j, k, 0), sizeof value);
  return value;
}

void check_row_index(int32_t row, int64_t bound, int64_t i, int64_t j, int64_t k) {
  if (row >= 0 && row < bound) return;
  throw Error("row index " + std::to_string(row) + " at idx[" + std::to_string(i) + "," + std::to_string(j) + "," +
              std::to_string(k) + "] is out of range [0, " + std::to_string(bound) + ")");
}

size_t unit_bytes(DType type) { return dtype_traits(type).type_size; }
int64_t units_per_row(const Tensor& t) { return t.ne[0] / int64_t(dtype_traits(t.type).block_size); }

bool ranges_overlap(const Tensor& a, const Tensor& b) {
  const auto* a0 = static_cast<const char*>(a.data);
  const auto* b0 = static_cast<const char*>(b.data);
  return a0 < b0 + b.nbytes() && b0 < a0 + a.nbytes();
}

bool same_layout(const Tensor& a, const Tensor& b) {
  return a.data == b.data && a.type == b.type && same_shape(a, b) && std::equal(a.nb, a.nb + kMaxDims, b.nb);
}

// Walks a tensor in logical order (dimension 0 fastest) in steps of `per_row` positions per row:
// storage units for bit copies, elements for converting copies.
class Cursor {
 public:
  Cursor(const Tensor& t, int64_t per_row, int64_t flat) : t_(t), per_row_(per_row) {
    i_[0] = flat % per_row;
    flat /= per_row;
    for (int d = 1; d < kMaxDims; ++d) {
      i_[d] = flat % t.ne[d];
      flat /= t.ne[d];
    }
  }
  const int64_t* position() const { return i_; }
  void advance() {
    if (++i_[0] < per_row_) return;
    i_[0] = 0;
    for (int d = 1; d < kMaxDims && ++i_[d] == t_.ne[d]; ++d) i_[d] = 0;
  }

 private:
  const Tensor& t_;
  int64_t per_row_;
  int64_t i_[kMaxDims];
};

char* unit_ptr(const Tensor& t, const int64_t* i) { return row_ptr(t, i[1], i[2], i[3]) + i[0] * int64_t(t.nb[0]); }

// Element i of t as f32, quantized types included (their element lives in block i[0] / block
// size, which is decoded whole: this serves only copies between rows of different lengths).
float element_f32(const Tensor& t, const int64_t* i) {
  const DTypeTraits& traits = dtype_traits(t.type);
  if (traits.block_size > 1) {
    const int64_t block = int64_t(traits.block_size);
    alignas(8) char bytes[kMaxBlockBytes];
    float values[kMaxBlockSize];
    std::memcpy(bytes, row_ptr(t, i[1], i[2], i[3]) + i[0] / block * int64_t(t.nb[0]), traits.type_size);
    row_to_f32(t.type, bytes, values, block);
    return values[i[0] % block];
  }
  float value;
  row_to_f32(t.type, unit_ptr(t, i), &value, 1);
  return value;
}

// dst = src for tensors with the same element count, in logical order.
void copy_tensor(const Tensor& dst, const Tensor& src, ExecContext& exec) {
  const VecKernels& vec = exec.vec();
  const bool same_type = src.type == dst.type;
  const int64_t ne0 = dst.ne[0];

  if (same_type && src.is_contiguous() && dst.is_contiguous()) {
    const int64_t bytes = int64_t(dst.nbytes());
    exec.parallel_range(bytes, 1, [&](const ThreadContext&, int64_t begin, int64_t end) {
      std::memcpy(static_cast<char*>(dst.data) + begin, static_cast<const char*>(src.data) + begin,
                  size_t(end - begin));
    });
    return;
  }

  if (src.ne[0] == ne0) {
    // Rows line up: row r of dst is row r of src, whatever the other dims.
    exec.parallel_range(dst.nrows(), ne0, [&](const ThreadContext& tc, int64_t begin, int64_t end) {
      float* buf = same_type ? nullptr : tc.scratch.floats(size_t(ne0));
      Cursor from(src, 1, begin);
      for_each_row(dst, begin, end, [&](int64_t i1, int64_t i2, int64_t i3) {
        const int64_t* s = from.position();
        const char* src_row = row_ptr(src, s[1], s[2], s[3]);
        char* dst_row = row_ptr(dst, i1, i2, i3);
        if (same_type) {
          copy_units(dst_row, dst.nb[0], src_row, src.nb[0], units_per_row(dst), unit_bytes(dst.type));
        } else {
          load_f32(vec, src.type, src_row, src.nb[0], ne0, buf);
          store_f32(vec, dst.type, buf, dst_row, dst.nb[0], ne0);
        }
        from.advance();
      });
    });
    return;
  }

  // Rows of different lengths: walk src position by position.
  exec.parallel_range(dst.nrows(), ne0, [&](const ThreadContext& tc, int64_t begin, int64_t end) {
    float* buf = same_type ? nullptr : tc.scratch.floats(size_t(ne0));
    const int64_t src_per_row = same_type ? units_per_row(src) : src.ne[0];
    const int64_t dst_per_row = same_type ? units_per_row(dst) : ne0;
    Cursor from(src, src_per_row, begin * dst_per_row);
    for_each_row(dst, begin, end, [&](int64_t i1, int64_t i2, int64_t i3) {
      char* dst_row = row_ptr(dst, i1, i2, i3);
      for (int64_t u = 0; u < dst_per_row; ++u, from.advance()) {
        if (same_type) {
          std::memcpy(dst_row + u * int64_t(dst.nb[0]), unit_ptr(src, from.position()), unit_bytes(dst.type));
        } else {
          buf[u] = element_f32(src, from.position());
        }
      }
      if (!same_type) store_f32(vec, dst.type, buf, dst_row, dst.nb[0], ne0);
    });
  });
}

}  // namespace

void run_get_rows(const Tensor& node, ExecContext& exec) {
  const Tensor& a = *node.src[0];
  const Tensor& idx = *node.src[1];
  const VecKernels& vec = exec.vec();
  const int64_t ne0 = a.ne[0];
  exec.parallel_range(node.nrows(), ne0, [&](const ThreadContext& tc, int64_t begin, int64_t end) {
    float* buf = tc.scratch.floats(size_t(ne0));
    // Output row (i, j, k) is a's row idx[i, j, k] of batch (j, k).
    for_each_row(node, begin, end, [&](int64_t i, int64_t j, int64_t k) {
      const int32_t row = read_index(idx, i, j, k);
      check_row_index(row, a.ne[1], i, j, k);
      const char* src = row_ptr(a, row, j, k);
      if (a.type == node.type) {
        copy_units(row_ptr(node, i, j, k), node.nb[0], src, a.nb[0], ne0, unit_bytes(a.type));
        return;
      }
      float* out = output_row_f32(node, i, j, k, buf);
      load_f32(vec, a.type, src, a.nb[0], ne0, out);
      finish_row_f32(vec, node, i, j, k, out);
    });
  });
}

void run_set_rows(const Tensor& node, ExecContext& exec) {
  // node aliases dst's memory; rows not named by idx keep their contents.
  const Tensor& src = *node.src[1];
  const Tensor& idx = *node.src[2];
  const VecKernels& vec = exec.vec();
  const int64_t ne0 = src.ne[0];
  // Each task owns the destination rows r with r % nth == ith and applies their writes in src
  // order, so repeated indices end with the last write, as a sequential loop would.
  exec.parallel(exec.tasks_for(src.nrows(), ne0), [&](const ThreadContext& tc) {
    float* buf = tc.scratch.floats(size_t(ne0));
    for_each_row(src, 0, src.nrows(), [&](int64_t i, int64_t j, int64_t k) {
      const int64_t ij = j % idx.ne[1], ik = k % idx.ne[2];
      const int32_t row = read_index(idx, i, ij, ik);
      check_row_index(row, node.ne[1], i, ij, ik);
      if (row % tc.nth != tc.ith) return;
      const float* values = read_row_f32(vec, src, i, j, k, buf);
      store_f32(vec, node.type, values, row_ptr(node, row, j, k), node.nb[0], ne0);
    });
  });
}

void run_copy(const Tensor& node, ExecContext& exec) {
  const Tensor& a = *node.src[0];
  if (same_layout(a, node)) return;  // a copy onto itself
  if (!ranges_overlap(a, node)) return copy_tensor(node, a, exec);
  // Source and destination share memory: read all of the source first (into a contiguous copy)
  // so that no element is overwritten before it is read.
  Tensor staged = a;
  staged.view_src = nullptr;
  staged.data = exec.shared_scratch(row_size(a.type, a.ne[0]) * size_t(a.nrows()));
  staged.nb[0] = unit_bytes(a.type);
  staged.nb[1] = row_size(a.type, a.ne[0]);
  for (int d = 2; d < kMaxDims; ++d) staged.nb[d] = staged.nb[d - 1] * size_t(a.ne[d - 1]);
  copy_tensor(staged, a, exec);
  copy_tensor(node, staged, exec);
}

void run_concat(const Tensor& node, ExecContext& exec) {
  const Tensor& a = *node.src[0];
  const Tensor& b = *node.src[1];
  const int dim = node.op_params[0];
  const size_t bytes = unit_bytes(node.type);
  exec.parallel_range(node.nrows(), node.ne[0], [&](const ThreadContext&, int64_t begin, int64_t end) {
    for_each_row(node, begin, end, [&](int64_t i1, int64_t i2, int64_t i3) {
      char* out = row_ptr(node, i1, i2, i3);
      if (dim == 0) {
        copy_units(out, node.nb[0], row_ptr(a, i1, i2, i3), a.nb[0], a.ne[0], bytes);
        copy_units(out + a.ne[0] * int64_t(node.nb[0]), node.nb[0], row_ptr(b, i1, i2, i3), b.nb[0], b.ne[0], bytes);
        return;
      }
      int64_t i[kMaxDims] = {0, i1, i2, i3};
      const Tensor* from = &a;
      if (i[dim] >= a.ne[dim]) {
        from = &b;
        i[dim] -= a.ne[dim];
      }
      copy_units(out, node.nb[0], row_ptr(*from, i[1], i[2], i[3]), from->nb[0], node.ne[0], bytes);
    });
  });
}

}  // namespace tg::cpu
