#pragma once
// The ABI between the host (frontend/compiled_gemm.h) and a JIT-compiled fused GEMM kernel,
// D = epilogue(A · B) (lower.h, KernelKind::kGemm):
//   run(block_num, stream, params)   block_num = the Launcher's thread count,
//                                    stream = const Launcher* (nullptr: run serially),
//                                    params = const GemmParams*.
// The kernel either reports the workspace a problem needs (kQuery: the epilogue's scratch, then
// the GEMM's packed operands and accumulator blocks) or runs in it (kRun). Plain C types
// only, so it crosses the dlopen boundary.
#include <cstddef>
#include <cstdint>

#include "tilegraph/evg/block.h"
#include "tilegraph/evg/driver/epilogue_params.h"
#include "tilegraph/evg/kernel/operand.h"

namespace tg::evg::driver {

struct GemmParams {
  KernelCall call;
  GemmShape problem;
  MatrixOperand a;  // M x K
  MatrixOperand b;  // K x N
};

}  // namespace tg::evg::driver
