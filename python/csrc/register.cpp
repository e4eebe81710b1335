// torch.ops.tilegraph.*: the TORCH_LIBRARY layer (as in torch_catlass). The schemas are the ops' documentation
// as Python and TorchScript see them (docs/python.md has them with examples). Registered for
// every backend (a catch-all), so that a tensor on another device reaches the op and gets its
// message ("a is on meta; the tilegraph ops run on the CPU") rather than the dispatcher's. The
// results never require grad: there is no autograd formula.
#include <torch/library.h>

#include "ops.h"

TORCH_LIBRARY(tilegraph, m) {
  // a (M x K) @ b (K x N): f32, f16 or bf16 inputs in any mix, f32 accumulation, the result in
  // out_dtype (float32, float16 or bfloat16; float32 if None).
  m.def("basic_matmul(Tensor a, Tensor b, ScalarType? out_dtype=None) -> Tensor", &tg::python::basic_matmul);
  // The outputs of a string epilogue over acc = a @ b (docs/evg.md has the language), in the
  // order `outputs` names them (None: just D). tensors[i] is the operand names[i]: 2-D M x N for a matrix
  // (`C`), 1-D N long for a row vector (`bias[col]`), M long for a column vector (`scale[row]`);
  // scalars[i] is the f32 scalar scalar_names[i]. A matrix output is out_dtype, else the type
  // its statement casts to last (`D = f16(...)`), else float32; a row_*/col_* reduction output
  // is a float32 vector of N / M values.
  m.def(
      "evg_matmul(Tensor a, Tensor b, str epilogue, str[] names, Tensor[] tensors, str[] scalar_names, "
      "float[] scalars, ScalarType? out_dtype=None, str[]? outputs=None) -> Tensor[]",
      &tg::python::evg_matmul);
  // The in-process kernel cache's kernels, hits and misses, and the JIT's compiles and disk hits
  // in this process.
  m.def("cache_stats() -> (int kernels, int hits, int misses, int jit_compiles, int jit_disk_hits)",
        &tg::python::cache_stats);
}
