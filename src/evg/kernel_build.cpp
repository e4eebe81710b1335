#include "kernel_build.h"

#include "cpu_target.h"
#include "tilegraph/core/error.h"
#include "tilegraph/jit/compiler.h"

namespace tg::evg::frontend {

BuiltKernel build_kernel(const EpilogueDag& dag, std::string_view source, const CompileOptions& options,
                         KernelKind kind) {
  if (options.compute_length < 16 || options.compute_length % 16 != 0 || options.compute_length > (1 << 20)) {
    throw Error("evg: compute_length=" + std::to_string(options.compute_length) +
                " (expected a multiple of 16 from 16 to 1048576)");
  }
  const CpuTarget target = options.lanes == 0 ? native_cpu_target() : cpu_target_for_lanes(options.lanes);
  LowerOptions lower;
  lower.lanes = target.lanes;
  lower.target = target.pragma_target;
  lower.fuse_compute = options.fuse_compute;
  lower.compute_length = options.compute_length;
  lower.kind = kind;
  lower.source_text = std::string(source);
  BuiltKernel built;
  built.lanes = target.lanes;
  built.cpp = lower_to_cpp(dag, lower);
  jit::Compiler& compiler = options.compiler ? *options.compiler : jit::Compiler::instance();
  const jit::Kernel kernel = compiler.load_source(built.cpp, {}, jit::KernelType::kCpu);
  built.entry = kernel.entry;
  built.id = kernel.id;
  return built;
}

OrderedBindings::OrderedBindings(const EpilogueDag& dag, const Signature& signature, const Bindings& bindings,
                                 const GemmShape& problem)
    : size_(dag.operands.size()) {
  if (size_ > kInline) spilled_.resize(size_);
  driver::Binding* out = size_ <= kInline ? inline_.data() : spilled_.data();
  for (size_t i = 0; i < size_; ++i) {
    const OperandDecl& d = dag.operands[i];
    const auto it = bindings.find(d.name);
    if (it == bindings.end())
      throw Error("evg: no binding for " + std::string(kind_name(d.kind)) + " '" + d.name + "'");
    out[i] = it->second;
    if (it->second.packed == Binding::Packed::kRows) out[i].row_stride = problem.n;
    if (it->second.packed == Binding::Packed::kColumns) out[i].col_stride = problem.m;
  }
  for (const auto& [name, binding] : bindings) {
    if (!signature.find_input(name) && !signature.find_output(name)) {
      throw Error("evg: binding for '" + name + "', which the epilogue does not declare");
    }
  }
}

}  // namespace tg::evg::frontend
