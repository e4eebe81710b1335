#pragma once
// How the GEMM's kernel layer sees its input matrices. Plain data, free of backend types, and
// outside the target namespace (target.h) so that the same descriptor passes between code
// compiled for different instruction sets.
#include <cstdint>

namespace tg::evg {

enum class ElementType : uint8_t { F32, F16, BF16 };

inline constexpr int element_bytes(ElementType type) { return type == ElementType::F32 ? 4 : 2; }

// A rows x cols matrix (rows and cols are the GEMM's view: M x K for A, K x N for B). Element
// (r, c) is data[r * ld + c], or data[c * ld + r] when `transposed` (column-major storage, the
// torch_catlass's trans flag). `ld` counts elements; any value >= 0 is accepted, so rows may overlap.
struct MatrixOperand {
  const void* data = nullptr;
  ElementType type = ElementType::F32;
  int64_t ld = 0;
  bool transposed = false;
};

}  // namespace tg::evg
