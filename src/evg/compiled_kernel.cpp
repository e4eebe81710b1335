#include "tilegraph/evg/frontend/compiled_kernel.h"

#include <utility>

#include "kernel_build.h"

namespace tg::evg::frontend {

Binding Binding::matrix(const void* data, int64_t ld) {
  Binding b = strided(data, ld, 1);
  if (ld == 0) b.packed = Packed::kRows;
  return b;
}

Binding Binding::column_major(const void* data, int64_t ld) {
  Binding b = strided(data, 1, ld);
  if (ld == 0) b.packed = Packed::kColumns;
  return b;
}

Binding Binding::strided(const void* data, int64_t row_stride, int64_t col_stride) {
  Binding b;
  b.data = const_cast<void*>(data);
  b.row_stride = row_stride;
  b.col_stride = col_stride;
  return b;
}

Binding Binding::vector(const void* data, int64_t stride) { return strided(data, stride, stride); }

Binding Binding::value(float value) {
  Binding b;
  b.scalar = value;
  return b;
}

CompiledKernel::CompiledKernel(std::string_view source, Signature signature, const CompileOptions& options,
                               KernelKind kind)
    : signature_(std::move(signature)), dag_(build_dag(source, signature_)) {
  BuiltKernel built = build_kernel(dag_, source, options, kind);
  lanes_ = built.lanes;
  cpp_ = std::move(built.cpp);
  kernel_id_ = std::move(built.id);
  entry_ = built.entry;
}

}  // namespace tg::evg::frontend
