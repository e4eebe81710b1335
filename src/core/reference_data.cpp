// Data movement: get_rows, set_rows, cpy/cont and concat.
#include <array>
#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "reference_internal.h"
#include "tilegraph/core/error.h"

namespace tg::reference::detail {

namespace {

// `rows` is the tensor the index selects a row of (dimension 1).
void check_row_index(Op op, const Tensor& rows, int32_t index, int64_t i, int64_t j, int64_t k) {
  if (index >= 0 && index < rows.ne[1]) return;
  throw Error(std::string(op_name(op)) + ": row index " + std::to_string(index) + " at idx[" + std::to_string(i) + "," +
              std::to_string(j) + "," + std::to_string(k) + "] is out of range [0, " + std::to_string(rows.ne[1]) +
              ") (" + describe(rows) + ")");
}

// Calls fn(unit pointer, unit coordinates) for every storage unit of `t` in logical order.
template <typename Fn>
void for_each_unit(const Tensor& t, Fn&& fn) {
  const int64_t units = t.ne[0] / unit_elems(t.type);
  for_each_row(t, [&](int64_t i1, int64_t i2, int64_t i3) {
    for (int64_t u = 0; u < units; ++u) {
      fn(static_cast<char*>(t.element_ptr(u, i1, i2, i3)), std::array<int64_t, 4>{u, i1, i2, i3});
    }
  });
}

}  // namespace

void get_rows(const Tensor& node) {
  const Tensor& a = *node.src[0];
  const Tensor& idx = *node.src[1];
  for (int64_t k = 0; k < idx.ne[2]; ++k) {
    for (int64_t j = 0; j < idx.ne[1]; ++j) {
      for (int64_t i = 0; i < idx.ne[0]; ++i) {
        const int32_t row = read_i32(idx, i, j, k);
        check_row_index(node.op, a, row, i, j, k);
        copy_row(a, row, j, k, node, i, j, k);
      }
    }
  }
}

void set_rows(const Tensor& node) {
  // node aliases dst's memory (node.src[0]); rows not named by idx keep their contents.
  const Tensor& src = *node.src[1];
  const Tensor& idx = *node.src[2];
  for (int64_t k = 0; k < src.ne[3]; ++k) {
    for (int64_t j = 0; j < src.ne[2]; ++j) {
      for (int64_t i = 0; i < src.ne[1]; ++i) {
        const int32_t row = read_i32(idx, i, j % idx.ne[1], k % idx.ne[2]);
        check_row_index(node.op, node, row, i, j % idx.ne[1], k % idx.ne[2]);
        copy_row(src, i, j, k, node, row, j, k);
      }
    }
  }
}

void copy(const Tensor& node) {
  // cpy and cont both copy src[0] into the node (cpy's node aliases b) in logical order, so the
  // shapes may differ as long as the element counts match. The source is read completely before
  // anything is written, which keeps overlapping source and destination well defined.
  const Tensor& a = *node.src[0];
  if (a.type != node.type) {
    write_all(node, read_all(a));
    return;
  }
  // Same type: move storage units untouched, so i32 and quantized copies are exact.
  const size_t bytes = unit_bytes(a.type);
  std::vector<std::byte> units;
  units.reserve(size_t(a.nelements() / unit_elems(a.type)) * bytes);
  for_each_unit(a, [&](const char* p, const std::array<int64_t, 4>&) {
    const auto* first = reinterpret_cast<const std::byte*>(p);
    units.insert(units.end(), first, first + bytes);
  });
  const std::byte* next = units.data();
  for_each_unit(node, [&](char* p, const std::array<int64_t, 4>&) {
    std::memcpy(p, next, bytes);
    next += bytes;
  });
}

void concat(const Tensor& node) {
  const Tensor& a = *node.src[0];
  const Tensor& b = *node.src[1];
  const int dim = node.op_params[0];
  const size_t bytes = unit_bytes(node.type);
  const int64_t a_extent = dim == 0 ? a.ne[0] / unit_elems(a.type) : a.ne[dim];
  for_each_unit(node, [&](char* p, std::array<int64_t, 4> i) {
    const Tensor* from = &a;
    if (i[dim] >= a_extent) {
      from = &b;
      i[dim] -= a_extent;
    }
    std::memcpy(p, from->element_ptr(i[0], i[1], i[2], i[3]), bytes);
  });
}

}  // namespace tg::reference::detail
