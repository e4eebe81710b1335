#include "tilegraph/compiler/host_tensor.h"

#include <cstring>

#include "tilegraph/core/error.h"

namespace tg::compiler {

size_t dense_bytes(DType type, std::span<const int64_t> shape) {
  if (shape.size() > size_t(kMaxDims)) {
    throw Error("host tensor: " + std::to_string(shape.size()) + " dimensions, at most " + std::to_string(kMaxDims));
  }
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < shape.size(); ++i) rows *= shape[i];
  for (int64_t size : shape) {
    if (size < 0) throw Error("host tensor: negative size in " + shape_string(shape));
  }
  const int64_t row = shape.empty() ? 1 : shape.back();
  return size_t(rows) * row_size(type, row);
}

HostTensor::HostTensor(DType type, std::vector<int64_t> shape) : type_(type), shape_(std::move(shape)) {}

HostTensor HostTensor::zeros(DType type, std::vector<int64_t> shape) {
  HostTensor t(type, std::move(shape));
  const size_t bytes = dense_bytes(type, t.shape_);
  t.owned_ = std::shared_ptr<std::byte[]>(new std::byte[std::max<size_t>(bytes, 1)]());
  t.data_ = t.owned_.get();
  t.writable_ = true;
  return t;
}

HostTensor HostTensor::borrow(DType type, std::vector<int64_t> shape, const void* data) {
  HostTensor t(type, std::move(shape));
  (void)dense_bytes(type, t.shape_);  // validates the shape
  t.data_ = data;
  return t;
}

HostTensor HostTensor::from_tensor(const Tensor& tensor, int rank) {
  if (rank < 0 || rank > kMaxDims) throw Error("host tensor: rank " + std::to_string(rank) + " is outside 0..4");
  for (int i = rank; i < kMaxDims; ++i) {
    if (tensor.ne[i] != 1) {
      throw Error("host tensor: " + tg::describe(tensor) + " does not fit in " + std::to_string(rank) + " dimensions");
    }
  }
  std::vector<int64_t> shape;
  for (int i = rank - 1; i >= 0; --i) shape.push_back(tensor.ne[i]);
  HostTensor t = zeros(tensor.type, std::move(shape));
  if (!tensor.data && t.nbytes() > 0) throw Error("host tensor: " + tg::describe(tensor) + " has no data");
  // Row by row, so that any strides are read; blocks of a quantized row stay together.
  const size_t row = tensor.row_bytes();
  auto* out = static_cast<std::byte*>(t.owned_.get());
  for (int64_t i3 = 0; i3 < tensor.ne[3]; ++i3) {
    for (int64_t i2 = 0; i2 < tensor.ne[2]; ++i2) {
      for (int64_t i1 = 0; i1 < tensor.ne[1]; ++i1, out += row) {
        const auto* src =
            static_cast<const std::byte*>(tensor.data) + i1 * tensor.nb[1] + i2 * tensor.nb[2] + i3 * tensor.nb[3];
        if (tensor.nb[0] == dtype_traits(tensor.type).type_size || is_quantized(tensor.type)) {
          std::memcpy(out, src, row);
        } else {
          const size_t element = dtype_traits(tensor.type).type_size;
          for (int64_t i0 = 0; i0 < tensor.ne[0]; ++i0)
            std::memcpy(out + i0 * element, src + i0 * tensor.nb[0], element);
        }
      }
    }
  }
  return t;
}

std::array<int64_t, kMaxDims> HostTensor::ne() const {
  std::array<int64_t, kMaxDims> ne = {1, 1, 1, 1};
  for (size_t i = 0; i < shape_.size(); ++i) ne[i] = shape_[shape_.size() - 1 - i];
  return ne;
}

int64_t HostTensor::elements() const {
  int64_t n = 1;
  for (int64_t size : shape_) n *= size;
  return n;
}

size_t HostTensor::nbytes() const { return dense_bytes(type_, shape_); }

void* HostTensor::mutable_data() {
  if (!writable_) throw Error("host tensor: " + describe() + " borrows its bytes and cannot be written");
  return const_cast<void*>(data_);
}

std::vector<float> HostTensor::to_f32() const {
  std::vector<float> values(static_cast<size_t>(elements()));
  const int64_t row = shape_.empty() ? 1 : shape_.back();
  if (row == 0) return values;
  const size_t row_bytes = row_size(type_, row);
  for (int64_t r = 0; r < elements() / row; ++r) {
    row_to_f32(type_, static_cast<const std::byte*>(data_) + size_t(r) * row_bytes, values.data() + r * row, row);
  }
  return values;
}

std::string HostTensor::describe() const {
  std::string text(dtype_name(type_));
  text += "[";
  for (size_t i = 0; i < shape_.size(); ++i) {
    if (i) text += 'x';
    text += std::to_string(shape_[i]);
  }
  return text + "]";
}

}  // namespace tg::compiler
