#pragma once
// The Signature of an evg_matmul call, worked out from the epilogue and what the caller passed,
// so that Python callers never declare operand kinds: a tensor indexed [col] is a row vector,
// [row] a column vector, otherwise a matrix; a named number is a scalar. An output assigned a
// row_*(...) reduction is a row vector, col_*(...) a column vector, otherwise a matrix of
// `out_type`, else of the cast its statement ends in (D = f16(...)), else f32.
//
// Mistakes (an operand used both ways, a reduction into a matrix) are left for the front end,
// which reports them with their line and column when the kernel is built.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tilegraph/evg/frontend/signature.h"

namespace tg::python {

struct TensorOperand {
  std::string name;
  evg::frontend::ElementType type = evg::frontend::ElementType::kF32;
  int dims = 2;
};

// Tensors, then scalars, then outputs, each in the order given. Throws FrontEndError for a syntax
// error.
evg::frontend::Signature infer_signature(std::string_view epilogue, const std::vector<TensorOperand>& tensors,
                                         const std::vector<std::string>& scalars,
                                         const std::vector<std::string>& outputs,
                                         std::optional<evg::frontend::ElementType> out_type);

}  // namespace tg::python
