#include "WindowBytes.h"

#include "tilegraph/compiler/Dialect/Tx8be/IR/Tx8be.h"
#include "tilegraph/core/error.h"

namespace tg::compiler::tx8be {

uint64_t window_bytes(mlir::RankedTensorType type, llvm::ArrayRef<int64_t> window) {
  const std::optional<DType> dtype = core_dtype(type.getElementType());
  if (!dtype) throw Error("window_bytes: the element type has no core counterpart");
  const DTypeTraits& traits = dtype_traits(*dtype);
  uint64_t rows = 1;
  for (size_t d = 0; d + 1 < window.size(); ++d) rows *= uint64_t(window[d]);
  const uint64_t inner = window.empty() ? 1 : uint64_t(window.back());
  const uint64_t blocks = (inner + traits.block_size - 1) / traits.block_size;
  return rows * blocks * traits.type_size;
}

}  // namespace tg::compiler::tx8be
