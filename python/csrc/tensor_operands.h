#pragma once
// torch tensors as what CompiledGemm takes: element types, GemmInputs for A and B, Bindings for
// the epilogue's operands. torch_catlass's second layer, filling TParams (dtype, layout flags) and
// MatmulParams (m, n, k, addresses) from the tensors. Every check throws tg::Error naming the
// tensor and what is wrong with it in torch's terms (shapes "5x7", dtypes "float16").
#include <ATen/core/Tensor.h>

#include <string>
#include <string_view>

#include "tilegraph/evg/frontend/compiled_gemm.h"

namespace tg::python {

using evg::frontend::ElementType;

// "float32", "bfloat16", ... as torch.<name> spells them.
std::string dtype_name(at::ScalarType type);
// "5x7", "" for a 0-d tensor.
std::string shape_name(const at::Tensor& t);

// The element type of an epilogue operand for f32, f16, bf16, int8 and int32; false for others.
bool element_type_of(at::ScalarType type, ElementType& element);
at::ScalarType scalar_type_of(ElementType element);

// A dense CPU tensor with `dims` dimensions (1 or 2; 0: either).
void check_tensor(const at::Tensor& t, std::string_view what, int dims);

// A or B (2-D, f32, f16 or bf16) as the GEMM reads it: row-major and transposed (column-major)
// views in place, any other strides from a packed copy, which `keep` holds until the run is over.
evg::frontend::GemmInput gemm_input(const at::Tensor& t, std::string_view what, at::Tensor& keep);

// A matrix (2-D) or row or column vector (1-D) operand in its strides, read or written in place.
evg::frontend::Binding tensor_binding(const at::Tensor& t);

}  // namespace tg::python
