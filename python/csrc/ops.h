#pragma once
// The ops behind torch.ops.tilegraph.* (their schemas: register.cpp; docs/python.md). Each is
// torch_catlass's second layer: check the tensors, fill the GEMM's inputs and the epilogue's bindings,
// get the kernel (kernel_cache.h, then the JIT), run it on torch's threads. Every error is a
// tg::Error whose message starts "tilegraph.<op>: ", which Python sees as a RuntimeError.
#include <ATen/core/Tensor.h>
#include <c10/util/Optional.h>
#include <c10/util/string_view.h>

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

namespace tg::python {

// a (M x K) @ b (K x N), f32 accumulation, written as out_dtype (float32 unless given).
at::Tensor basic_matmul(const at::Tensor& a, const at::Tensor& b, c10::optional<at::ScalarType> out_dtype);

// The outputs of `epilogue` applied to a @ b, in `outputs`' order (none given: D); `names[i]` is
// `tensors[i]`, `scalar_names[i]` is `scalars[i]`.
std::vector<at::Tensor> evg_matmul(const at::Tensor& a, const at::Tensor& b, c10::string_view epilogue,
                                   c10::ArrayRef<std::string> names, at::TensorList tensors,
                                   c10::ArrayRef<std::string> scalar_names, c10::ArrayRef<double> scalars,
                                   c10::optional<at::ScalarType> out_dtype,
                                   c10::optional<c10::ArrayRef<std::string>> outputs);

// (kernels, hits, misses) of the in-process cache, then the JIT's compiles and disk hits in this
// process.
std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t> cache_stats();

}  // namespace tg::python
