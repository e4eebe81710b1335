#include "tensor_operands.h"

#include <algorithm>

#include "tilegraph/core/error.h"

namespace tg::python {

using evg::frontend::Binding;
using evg::frontend::GemmInput;

std::string dtype_name(at::ScalarType type) {
  switch (type) {
    case at::kFloat: return "float32";
    case at::kHalf: return "float16";
    case at::kBFloat16: return "bfloat16";
    case at::kDouble: return "float64";
    case at::kChar: return "int8";
    case at::kByte: return "uint8";
    case at::kShort: return "int16";
    case at::kInt: return "int32";
    case at::kLong: return "int64";
    case at::kBool: return "bool";
    default: return c10::toString(type);
  }
}

std::string shape_name(const at::Tensor& t) {
  std::string s;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (d) s += 'x';
    s += std::to_string(t.size(d));
  }
  return s;
}

bool element_type_of(at::ScalarType type, ElementType& element) {
  switch (type) {
    case at::kFloat: element = ElementType::kF32; return true;
    case at::kHalf: element = ElementType::kF16; return true;
    case at::kBFloat16: element = ElementType::kBF16; return true;
    case at::kChar: element = ElementType::kI8; return true;
    case at::kInt: element = ElementType::kI32; return true;
    default: return false;
  }
}

at::ScalarType scalar_type_of(ElementType element) {
  switch (element) {
    case ElementType::kF32: return at::kFloat;
    case ElementType::kF16: return at::kHalf;
    case ElementType::kBF16: return at::kBFloat16;
    case ElementType::kI8: return at::kChar;
    case ElementType::kI32: return at::kInt;
  }
  throw Error("tilegraph: unknown element type");
}

void check_tensor(const at::Tensor& t, std::string_view what, int dims) {
  const std::string name(what);
  if (!t.defined()) throw Error(name + " is an undefined tensor");
  if (!t.device().is_cpu()) {
    throw Error(name + " is on " + t.device().str() + "; the tilegraph ops run on the CPU (move it with .cpu())");
  }
  if (t.layout() != at::kStrided) throw Error(name + " is not a dense (strided) tensor");
  if (dims != 0 && t.dim() != dims) {
    throw Error(name + " is " + std::to_string(t.dim()) + "-D" + (t.dim() ? " (" + shape_name(t) + ")" : "") +
                "; expected a " + (dims == 2 ? "2-D matrix" : "1-D vector"));
  }
  if (dims == 0 && t.dim() != 1 && t.dim() != 2) {
    throw Error(name + " is " + std::to_string(t.dim()) + "-D" + (t.dim() ? " (" + shape_name(t) + ")" : "") +
                "; operands are 1-D vectors or 2-D matrices (pass scalars as numbers)");
  }
}

GemmInput gemm_input(const at::Tensor& t, std::string_view what, at::Tensor& keep) {
  ElementType type;
  if (!(element_type_of(t.scalar_type(), type) && type != ElementType::kI8 && type != ElementType::kI32)) {
    throw Error(std::string(what) + " is " + dtype_name(t.scalar_type()) +
                "; the GEMM takes float32, float16 or bfloat16");
  }
  const int64_t rows = t.size(0), cols = t.size(1);
  const int64_t row_stride = t.stride(0), col_stride = t.stride(1);
  // A dimension of size 1 has no meaningful stride; a leading dimension of 0 means packed.
  if ((cols <= 1 || col_stride == 1) && (rows <= 1 || row_stride >= std::max<int64_t>(cols, 1))) {
    return GemmInput::row_major(t.data_ptr(), rows, cols, type, rows <= 1 ? 0 : row_stride);
  }
  if ((rows <= 1 || row_stride == 1) && (cols <= 1 || col_stride >= std::max<int64_t>(rows, 1))) {
    return GemmInput::col_major(t.data_ptr(), rows, cols, type, cols <= 1 ? 0 : col_stride);
  }
  keep = t.contiguous();
  return GemmInput::row_major(keep.data_ptr(), rows, cols, type);
}

Binding tensor_binding(const at::Tensor& t) {
  if (t.dim() == 1) return Binding::vector(t.data_ptr(), t.stride(0));
  return Binding::strided(t.data_ptr(), t.stride(0), t.stride(1));
}

}  // namespace tg::python
