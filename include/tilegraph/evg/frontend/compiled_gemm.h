#pragma once
// D = epilogue(A · B) from a string epilogue, compiled into one GEMM kernel: the JIT instantiates
// MatmulVisitor<BlockMmad, BlockEpilogue<...>, BlockScheduler> (driver/gemm_driver.h) for the
// CPU's ISA, and the epilogue runs on each accumulator block while it is in cache.
//
//   using namespace tg::evg::frontend;
//   Signature sig;
//   sig.input("alpha", OperandKind::kScalar).input("bias", OperandKind::kRowVector).output("D");
//   CompiledGemm gemm("D = gelu(acc * alpha + bias[col])", sig);
//   gemm.run(GemmInput::row_major(a, m, k), GemmInput::col_major(w, k, n, ElementType::kBF16),
//            {{"alpha", Binding::value(0.5f)}, {"bias", Binding::vector(bias)},
//             {"D", Binding::matrix(d, n)}},
//            launcher);
#include <cstdint>
#include <string>
#include <string_view>

#include "tilegraph/evg/block.h"
#include "tilegraph/evg/frontend/compiled_kernel.h"

namespace tg::evg::frontend {

// A GEMM input with its shape as the GEMM sees it (A: M x K, B: K x N). Element (r, c) is at
// data[r * ld + c] (row-major) or data[c * ld + r] (column-major, torch_catlass's trans flag).
struct GemmInput {
  const void* data = nullptr;
  ElementType type = ElementType::kF32;  // f32, f16 or bf16
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t ld = 0;  // 0: packed
  bool column_major = false;

  static GemmInput row_major(const void* data, int64_t rows, int64_t cols, ElementType type = ElementType::kF32,
                             int64_t ld = 0);
  static GemmInput col_major(const void* data, int64_t rows, int64_t cols, ElementType type = ElementType::kF32,
                             int64_t ld = 0);
};

class CompiledGemm : public CompiledKernel {
 public:
  // Throws FrontEndError for a bad epilogue, tg::Error for bad options or a failed compile.
  CompiledGemm(std::string_view source, Signature signature, const CompileOptions& options = {});

  // D = epilogue(A · B) on the launcher's threads. `bindings` names every declared operand; matrix
  // operands are M x N, row vectors N long, column vectors M long. Throws tg::Error for shapes
  // that do not fit (A's columns against B's rows, strides below the packed ones, element types
  // the GEMM does not take), missing or unknown bindings, and whatever a node rejects.
  // Runs in this kernel's own workspace; a caller that finds it busy (another thread running
  // this kernel) runs in a temporary one.
  void run(const GemmInput& a, const GemmInput& b, const Bindings& bindings,
           const Launcher& launcher = Launcher::serial()) const;
  // The same in the caller's workspace.
  void run(const GemmInput& a, const GemmInput& b, const Bindings& bindings, const Launcher& launcher,
           KernelWorkspace& workspace) const;
};

}  // namespace tg::evg::frontend
