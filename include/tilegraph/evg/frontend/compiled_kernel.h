#pragma once
// What every kernel compiled from a string epilogue has: the checked DAG, the generated C++, the
// JIT entry point and a workspace of its own (CompiledEpilogue: the epilogue alone, applied to
// accumulator blocks; CompiledGemm: fused into one GEMM kernel), and how callers name operands.
#include <map>
#include <string>
#include <string_view>

#include "tilegraph/evg/driver/epilogue_params.h"
#include "tilegraph/evg/frontend/dag.h"
#include "tilegraph/evg/frontend/kernel_workspace.h"
#include "tilegraph/evg/frontend/lower.h"
#include "tilegraph/evg/frontend/signature.h"
#include "tilegraph/jit/kernel.h"

namespace tg::jit {
class Compiler;
}

namespace tg::evg::frontend {

// Where an operand's data is (driver::Binding with named constructors).
struct Binding : driver::Binding {
  // Row-major with `ld` elements between rows (0: packed, n).
  static Binding matrix(const void* data, int64_t ld);
  // Column-major (a transposed row-major matrix) with `ld` elements between columns (0: packed, m).
  static Binding column_major(const void* data, int64_t ld);
  static Binding strided(const void* data, int64_t row_stride, int64_t col_stride);
  // A row or column vector, `stride` elements apart.
  static Binding vector(const void* data, int64_t stride = 1);
  static Binding value(float value);  // a scalar input

  // A packed matrix's stride, which needs the problem's size: set when it is run.
  enum class Packed : uint8_t { kNo, kRows, kColumns };
  Packed packed = Packed::kNo;
};

// Every declared operand by name.
using Bindings = std::map<std::string, Binding, std::less<>>;

struct CompileOptions {
  // 0: the widest the CPU runs (16 with AVX-512, 8 with AVX2, else 4); otherwise 1, 2, 4, 8 or
  // 16 — more than the CPU has is an error.
  int lanes = 0;
  bool fuse_compute = true;
  int compute_length = 2048;
  // nullptr: jit::Compiler::instance().
  jit::Compiler* compiler = nullptr;
};

class CompiledKernel {
 public:
  const EpilogueDag& dag() const { return dag_; }
  const std::string& cpp_source() const { return cpp_; }
  const std::string& kernel_id() const { return kernel_id_; }
  int lanes() const { return lanes_; }

 protected:
  // Parses, checks, lowers as `kind` and compiles. Throws FrontEndError for a bad epilogue,
  // tg::Error for bad options or a failed compile.
  CompiledKernel(std::string_view source, Signature signature, const CompileOptions& options, KernelKind kind);

  Signature signature_;
  EpilogueDag dag_;
  int lanes_ = 0;
  std::string cpp_;
  std::string kernel_id_;
  jit::EntryFn entry_ = nullptr;
  // Used by runs that bring no workspace of their own.
  mutable SharedWorkspace own_workspace_;
};

}  // namespace tg::evg::frontend
