#include "tilegraph/evg/frontend/compiled_gemm.h"

#include <string>
#include <vector>

#include "kernel_build.h"
#include "tilegraph/core/error.h"
#include "tilegraph/evg/driver/gemm_params.h"

namespace tg::evg::frontend {

namespace {

std::string shape_text(const GemmInput& m) {
  return std::to_string(m.rows) + "x" + std::to_string(m.cols) + (m.column_major ? " column-major" : "");
}

// The kernel layer's view of `m`, after checking what it cannot: sizes, strides, data, type.
MatrixOperand checked_operand(const char* name, const GemmInput& m) {
  // Built only on error: a steady run allocates nothing.
  const auto what = [&] { return std::string("evg gemm: ") + name + " (" + shape_text(m) + ")"; };
  if (m.rows < 0 || m.cols < 0) throw Error(what() + " has a negative size");
  MatrixOperand op;
  switch (m.type) {
    case ElementType::kF32: op.type = evg::ElementType::F32; break;
    case ElementType::kF16: op.type = evg::ElementType::F16; break;
    case ElementType::kBF16: op.type = evg::ElementType::BF16; break;
    default: throw Error(what() + " is " + std::string(element_name(m.type)) + "; the GEMM takes f32, f16 or bf16");
  }
  // Consecutive elements along a row (column-major: a column) are contiguous, the other way ld apart.
  const int64_t contiguous = m.column_major ? m.rows : m.cols;
  if (m.ld < 0) throw Error(what() + " has a negative leading dimension");
  if (m.ld != 0 && m.ld < contiguous) {
    throw Error(what() + " has a leading dimension of " + std::to_string(m.ld) + ", below the " +
                std::to_string(contiguous) + " elements it must hold");
  }
  if (m.rows > 0 && m.cols > 0 && !m.data) throw Error(what() + " has no data");
  op.data = m.data;
  op.ld = m.ld != 0 ? m.ld : contiguous;
  op.transposed = m.column_major;
  return op;
}

}  // namespace

GemmInput GemmInput::row_major(const void* data, int64_t rows, int64_t cols, ElementType type, int64_t ld) {
  return {data, type, rows, cols, ld, false};
}

GemmInput GemmInput::col_major(const void* data, int64_t rows, int64_t cols, ElementType type, int64_t ld) {
  return {data, type, rows, cols, ld, true};
}

CompiledGemm::CompiledGemm(std::string_view source, Signature signature, const CompileOptions& options)
    : CompiledKernel(source, std::move(signature), options, KernelKind::kGemm) {}

void CompiledGemm::run(const GemmInput& a, const GemmInput& b, const Bindings& bindings,
                       const Launcher& launcher) const {
  own_workspace_.use([&](KernelWorkspace& workspace) { run(a, b, bindings, launcher, workspace); });
}

void CompiledGemm::run(const GemmInput& a, const GemmInput& b, const Bindings& bindings, const Launcher& launcher,
                       KernelWorkspace& workspace) const {
  driver::GemmParams params;
  params.a = checked_operand("A", a);
  params.b = checked_operand("B", b);
  if (a.cols != b.rows) {
    throw Error("evg gemm: A is " + shape_text(a) + " and B is " + shape_text(b) +
                ": A's columns must equal B's rows (K)");
  }
  params.problem = GemmShape{a.rows, b.cols, a.cols};
  const OrderedBindings ordered(dag_, signature_, bindings, params.problem);
  params.call.bindings = ordered.data();
  params.call.num_bindings = ordered.size();
  if (launcher.num_threads < 1 || !launcher.parallel_for) throw Error("evg gemm: the launcher has no threads");
  run_kernel(entry_, uint32_t(launcher.num_threads), launcher, params, workspace);
}

}  // namespace tg::evg::frontend
