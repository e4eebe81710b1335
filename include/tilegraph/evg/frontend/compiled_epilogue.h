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
#include <span>
#include <string_view>

#include "tilegraph/evg/block.h"
#include "tilegraph/evg/frontend/compiled_kernel.h"

namespace tg::evg::frontend {

class CompiledEpilogue : public CompiledKernel {
 public:
  // Throws FrontEndError for a bad epilogue, tg::Error for bad options or a failed compile.
  CompiledEpilogue(std::string_view source, Signature signature, const CompileOptions& options = {});

  // Applies the epilogue to the accumulator blocks of `grid` over `problem` (all of them, or
  // any subset once each). `bindings` names every declared operand. Throws tg::Error for
  // missing or unknown bindings, blocks that are not blocks of the grid, and whatever a node
  // rejects (null pointers, strides). Runs in this kernel's own workspace; a caller that finds it
  // busy (another thread running this kernel) runs in a temporary one.
  void run(const GemmShape& problem, const BlockGrid& grid, std::span<const AccBlock> blocks, const Bindings& bindings,
           const Launcher& launcher = Launcher::serial()) const;
  // The same in the caller's workspace.
  void run(const GemmShape& problem, const BlockGrid& grid, std::span<const AccBlock> blocks, const Bindings& bindings,
           const Launcher& launcher, KernelWorkspace& workspace) const;
};

}  // namespace tg::evg::frontend
