#pragma once
// A string epilogue compiled to a kernel: parse, check, lower to C++ (lower.h), compile through
// the JIT (its caches make every compile after the first a lookup), run.
//
//   using namespace tg::evg::frontend;
//   Signature sig;
//   sig.input("alpha", OperandKind::kScalar).input("bias", OperandKind::kRowVector).output("D");
//   CompiledEpilogue epilogue("D = gelu(acc * alpha + bias[col])", sig);
//   epilogue.run(problem, grid, acc_blocks,
//                {{"alpha", Binding::value(0.5f)}, {"bias", Binding::vector(bias)},
//                 {"D", Binding::matrix(d, n)}});
#include <map>
#include <span>
#include <string>
#include <string_view>

#include "tilegraph/evg/block.h"
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
  // Row-major with `ld` elements between rows (0: packed).
  static Binding matrix(const void* data, int64_t ld);
  // Column-major (a transposed row-major matrix) with `ld` elements between columns.
  static Binding column_major(const void* data, int64_t ld);
  static Binding strided(const void* data, int64_t row_stride, int64_t col_stride);
  // A row or column vector, `stride` elements apart.
  static Binding vector(const void* data, int64_t stride = 1);
  static Binding value(float value);  // a scalar input
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

class CompiledEpilogue {
 public:
  // Throws FrontEndError for a bad epilogue, tg::Error for bad options or a failed compile.
  CompiledEpilogue(std::string_view source, Signature signature, const CompileOptions& options = {});

  const EpilogueDag& dag() const { return dag_; }
  const std::string& cpp_source() const { return cpp_; }
  const std::string& kernel_id() const { return kernel_id_; }
  int lanes() const { return lanes_; }

  // Applies the epilogue to the accumulator blocks of `grid` over `problem` (all of them, or
  // any subset once each). `bindings` names every declared operand. Throws tg::Error for
  // missing or unknown bindings, blocks that are not blocks of the grid, and whatever a node
  // rejects (null pointers, strides). Runs in this kernel's own workspace; a caller that finds it
  // busy (another thread running this kernel) runs in a temporary one.
  void run(const GemmShape& problem, const BlockGrid& grid, std::span<const AccBlock> blocks,
           const Bindings& bindings, const Launcher& launcher = Launcher::serial()) const;
  // The same in the caller's workspace.
  void run(const GemmShape& problem, const BlockGrid& grid, std::span<const AccBlock> blocks,
           const Bindings& bindings, const Launcher& launcher, KernelWorkspace& workspace) const;

 private:
  Signature signature_;
  EpilogueDag dag_;
  int lanes_ = 0;
  std::string cpp_;
  std::string kernel_id_;
  jit::EntryFn entry_ = nullptr;
  mutable SharedWorkspace own_workspace_;
};

}  // namespace tg::evg::frontend
