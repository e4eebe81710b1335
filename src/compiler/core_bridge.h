#pragma once
// Between tx8be types and core tensors: a ranked tensor type is a core tensor whose ne[] is the
// shape reversed and padded with ones. Shared by the dialect's interfaces, the importer and the
// interpreter.
#include <array>
#include <optional>
#include <string>

#include <mlir/IR/BuiltinTypes.h>

#include "tilegraph/core/context.h"
#include "tilegraph/core/tensor.h"

namespace tg::compiler {

// The core ne[] of `shape`, or nullopt for more than four dimensions or a dynamic size.
std::optional<std::array<int64_t, kMaxDims>> core_ne(llvm::ArrayRef<int64_t> shape);
// The ranked tensor type of a core tensor with `rank` dimensions (null when `tensor` has a
// dimension other than 1 beyond them).
mlir::RankedTensorType tensor_type(mlir::MLIRContext* context, const Tensor& tensor, int rank);
// A data-less core tensor standing for a value of `type`; throws tg::Error when the type has no
// core counterpart.
Tensor* core_tensor(Context& context, mlir::Type type);
// "tensor<2x3xf32>".
std::string type_string(mlir::Type type);
// The rank `tensor` needs: the index of its outermost dimension other than 1, plus one.
int min_rank(const Tensor& tensor);

}  // namespace tg::compiler
