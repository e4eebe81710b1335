#include "ops.h"

#include <ATen/ops/empty.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <new>
#include <optional>
#include <set>

#include "epilogue_signature.h"
#include "kernel_cache.h"
#include "tensor_operands.h"
#include "thread_workspace.h"
#include "tilegraph/core/error.h"
#include "tilegraph/jit/compiler.h"
#include "torch_launcher.h"

namespace tg::python {

using evg::frontend::Binding;
using evg::frontend::Bindings;
using evg::frontend::ElementType;
using evg::frontend::OperandDecl;
using evg::frontend::OperandKind;

namespace {

// Runs an op's body with every failure (ours, the front end's, the JIT's, torch's) as one
// tg::Error that names the op; torch's own messages without their C++ backtrace.
template <class Body>
auto guarded(const char* op, Body&& body) {
  const std::string prefix = std::string("tilegraph.") + op + ": ";
  try {
    return body();
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const c10::Error& e) {
    throw Error(prefix + e.what_without_backtrace());
  } catch (const std::exception& e) {
    throw Error(prefix + e.what());
  }
}

std::string quoted(const std::string& name) { return "'" + name + "'"; }

// The shape `decl` needs of tensor `t` (M x N matrix, N or M vector), or an error naming both.
void check_operand_shape(const OperandDecl& decl, const at::Tensor& t, int64_t m, int64_t n) {
  const int dims = decl.kind == OperandKind::kMatrix ? 2 : 1;
  const bool fits = t.dim() == dims && (decl.kind == OperandKind::kMatrix      ? t.size(0) == m && t.size(1) == n
                                        : decl.kind == OperandKind::kRowVector ? t.size(0) == n
                                                                               : t.size(0) == m);
  if (fits) return;
  const std::string use = decl.kind == OperandKind::kMatrix
                              ? decl.name + ", a matrix, must be M x N = " + std::to_string(m) + "x" + std::to_string(n)
                          : decl.kind == OperandKind::kRowVector
                              ? decl.name + "[col], a row vector, must be N = " + std::to_string(n) + " long"
                              : decl.name + "[row], a column vector, must be M = " + std::to_string(m) + " long";
  throw Error(quoted(decl.name) + " is " + std::to_string(t.dim()) + "-D (" + shape_name(t) + "); as " + use);
}

// The tensor an output needs: M x N of its element type, or an f32 reduction of N or M values.
at::Tensor allocate_output(const OperandDecl& decl, int64_t m, int64_t n) {
  const auto options = at::TensorOptions().dtype(scalar_type_of(decl.type));
  switch (decl.kind) {
    case OperandKind::kRowVector: return at::empty({n}, options);
    case OperandKind::kColVector: return at::empty({m}, options);
    default: return at::empty({m, n}, options);
  }
}

// What both ops are: D = epilogue(a @ b) with named operands.
std::vector<at::Tensor> run_gemm(const at::Tensor& a, const at::Tensor& b, std::string_view epilogue,
                                 c10::ArrayRef<std::string> names, at::TensorList tensors,
                                 c10::ArrayRef<std::string> scalar_names, c10::ArrayRef<double> scalars,
                                 std::optional<ElementType> out_type, c10::ArrayRef<std::string> outputs) {
  check_tensor(a, "a", 2);
  check_tensor(b, "b", 2);
  if (a.size(1) != b.size(0)) {
    throw Error("a is " + shape_name(a) + " and b is " + shape_name(b) + ": a's columns must equal b's rows (K)");
  }
  const int64_t m = a.size(0), n = b.size(1);
  at::Tensor a_packed, b_packed;
  const evg::frontend::GemmInput a_input = gemm_input(a, "a", a_packed);
  const evg::frontend::GemmInput b_input = gemm_input(b, "b", b_packed);

  if (names.size() != tensors.size()) {
    throw Error(std::to_string(names.size()) + " names for " + std::to_string(tensors.size()) + " tensors");
  }
  if (scalar_names.size() != scalars.size()) {
    throw Error(std::to_string(scalar_names.size()) + " scalar names for " + std::to_string(scalars.size()) +
                " scalars");
  }
  if (outputs.empty()) throw Error("no outputs named");
  std::set<std::string, std::less<>> seen;
  for (const auto* list : {&names, &scalar_names, &outputs}) {
    for (const std::string& name : *list) {
      if (!seen.insert(name).second) {
        throw Error(quoted(name) + " is named twice (operands and outputs need distinct names)");
      }
    }
  }

  // The key: the epilogue, then everything the Signature is worked out from, tensors by name.
  std::vector<TensorOperand> operands;
  for (size_t i = 0; i < names.size(); ++i) {
    const at::Tensor& t = tensors[i];
    check_tensor(t, quoted(names[i]), 0);
    TensorOperand op{names[i], ElementType::kF32, int(t.dim())};
    if (!element_type_of(t.scalar_type(), op.type)) {
      throw Error(quoted(names[i]) + " is " + dtype_name(t.scalar_type()) +
                  "; operands are float32, float16, bfloat16, int8 or int32");
    }
    operands.push_back(std::move(op));
  }
  std::sort(operands.begin(), operands.end(), [](const auto& x, const auto& y) { return x.name < y.name; });
  std::vector<std::string> sorted_scalars(scalar_names.begin(), scalar_names.end());
  std::sort(sorted_scalars.begin(), sorted_scalars.end());

  std::string key(epilogue);
  key += '\0';
  for (const TensorOperand& op : operands) {
    key += op.name + ':' + std::to_string(int(op.type)) + ':' + std::to_string(op.dims) + ';';
  }
  key += '\0';
  for (const std::string& name : sorted_scalars) key += name + ';';
  key += '\0';
  for (const std::string& name : outputs) key += name + ';';
  key += '\0';
  key += out_type ? std::to_string(int(*out_type)) : "-";

  // Before a build, so that an operand of the wrong shape costs no compile, and on every call.
  const auto check_shapes = [&](const evg::frontend::Signature& signature) {
    for (size_t i = 0; i < names.size(); ++i) check_operand_shape(*signature.find_input(names[i]), tensors[i], m, n);
  };
  const std::vector<std::string> output_names(outputs.begin(), outputs.end());
  const std::shared_ptr<const CachedGemm> kernel = KernelCache::instance().get(key, epilogue, [&] {
    evg::frontend::Signature signature = infer_signature(epilogue, operands, sorted_scalars, output_names, out_type);
    check_shapes(signature);
    return signature;
  });
  check_shapes(kernel->signature);

  Bindings bindings;
  for (size_t i = 0; i < names.size(); ++i) bindings.emplace(names[i], tensor_binding(tensors[i]));
  for (size_t i = 0; i < scalar_names.size(); ++i) bindings.emplace(scalar_names[i], Binding::value(float(scalars[i])));
  std::vector<at::Tensor> results;
  for (const std::string& name : outputs) {
    results.push_back(allocate_output(*kernel->signature.find_output(name), m, n));
    bindings.emplace(name, tensor_binding(results.back()));
  }
  kernel->gemm.run(a_input, b_input, bindings, torch_launcher(), thread_workspace());
  return results;
}

}  // namespace

at::Tensor basic_matmul(const at::Tensor& a, const at::Tensor& b, c10::optional<at::ScalarType> out_dtype) {
  return guarded("basic_matmul", [&] {
    const at::ScalarType out = out_dtype.value_or(at::kFloat);
    // torch_catlass's outDType: the epilogue's output element type, the cast rounding to nearest even.
    const char* epilogue = out == at::kFloat      ? "D = acc"
                           : out == at::kHalf     ? "D = f16(acc)"
                           : out == at::kBFloat16 ? "D = bf16(acc)"
                                                  : nullptr;
    ElementType type;
    if (!epilogue || !element_type_of(out, type)) {
      throw Error("out_dtype " + dtype_name(out) + ": basic_matmul writes float32, float16 or bfloat16");
    }
    return run_gemm(a, b, epilogue, {}, {}, {}, {}, type, {std::string("D")}).front();
  });
}

std::vector<at::Tensor> evg_matmul(const at::Tensor& a, const at::Tensor& b, c10::string_view epilogue,
                                   c10::ArrayRef<std::string> names, at::TensorList tensors,
                                   c10::ArrayRef<std::string> scalar_names, c10::ArrayRef<double> scalars,
                                   c10::optional<at::ScalarType> out_dtype,
                                   c10::optional<c10::ArrayRef<std::string>> outputs) {
  return guarded("evg_matmul", [&] {
    std::optional<ElementType> out_type;
    if (out_dtype) {
      ElementType type;
      if (!element_type_of(*out_dtype, type)) {
        throw Error("out_dtype " + dtype_name(*out_dtype) + ": outputs are float32, float16, bfloat16, int8 or int32");
      }
      out_type = type;
    }
    const std::string d = "D";
    return run_gemm(a, b, std::string_view(epilogue.data(), epilogue.size()), names, tensors, scalar_names, scalars,
                    out_type, outputs ? *outputs : c10::ArrayRef<std::string>(d));
  });
}

std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t> cache_stats() {
  const KernelCacheStats cache = KernelCache::instance().stats();
  const jit::CompilerStats jit = jit::Compiler::instance().stats();
  return {cache.kernels, cache.hits, cache.misses, int64_t(jit.compiles), int64_t(jit.disk_hits)};
}

}  // namespace tg::python
