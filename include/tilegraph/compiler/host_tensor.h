#pragma once
// A tensor on the host as the compiler's interpreter and the Compute interface pass it around:
// an element type, a shape (outermost dimension first, as in MLIR) and contiguous row-major
// bytes, owned or borrowed. No MLIR here, so tests and tools can build inputs without it.
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "tilegraph/core/dtype.h"
#include "tilegraph/core/tensor.h"

namespace tg::compiler {

class HostTensor {
 public:
  HostTensor() = default;
  // Zero-filled. Shapes have 0 to 4 dimensions; for a block-quantized type the innermost is
  // whole blocks. Throws tg::Error otherwise.
  static HostTensor zeros(DType type, std::vector<int64_t> shape);
  // Borrows `data`, which must outlive the tensor and every copy of it; read-only.
  static HostTensor borrow(DType type, std::vector<int64_t> shape, const void* data);
  // A contiguous copy of a core tensor (any strides) with `rank` dimensions: the reversed ne[]
  // less its leading ones, which must all be 1 beyond `rank`.
  static HostTensor from_tensor(const Tensor& tensor, int rank = kMaxDims);

  DType type() const { return type_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int rank() const { return int(shape_.size()); }
  // The core ne[] of this shape: reversed and padded with ones.
  std::array<int64_t, kMaxDims> ne() const;
  int64_t elements() const;
  size_t nbytes() const;
  const void* data() const { return data_; }
  // Writable bytes; throws for a borrowed tensor.
  void* mutable_data();
  std::span<const std::byte> bytes() const { return {static_cast<const std::byte*>(data_), nbytes()}; }
  // Values converted to f32 (i32 by value; quantized types dequantized).
  std::vector<float> to_f32() const;
  // "f32[2x3]" for messages.
  std::string describe() const;

 private:
  HostTensor(DType type, std::vector<int64_t> shape);

  DType type_ = DType::F32;
  std::vector<int64_t> shape_;
  std::shared_ptr<std::byte[]> owned_;
  const void* data_ = nullptr;
  bool writable_ = false;
};

// Bytes of a row-major tensor of `shape`; throws tg::Error for a negative size or an innermost
// size that is not whole blocks of `type`.
size_t dense_bytes(DType type, std::span<const int64_t> shape);

}  // namespace tg::compiler
