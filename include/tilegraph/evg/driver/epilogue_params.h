#pragma once
// The ABI between the host (frontend/compiled_epilogue.h) and a JIT-compiled epilogue kernel:
//   run(block_num, stream, params)   block_num = number of AccBlocks (must equal num_blocks),
//                                    stream = const Launcher* (nullptr: run serially),
//                                    params = const EpilogueParams*.
// The kernel either reports the workspace a run needs (kQuery) or runs in the caller's
// workspace (kRun), so that steady runs allocate nothing. Plain C types only, so it crosses the
// dlopen boundary.
#include <cstddef>
#include <cstdint>

#include "tilegraph/evg/block.h"

namespace tg::evg::driver {

// One declared operand. Matrices: element (r, c) at data[r * row_stride + c * col_stride].
// Row vectors: element c at data[c * col_stride]; column vectors: element r at
// data[r * row_stride]. Scalars: `scalar`.
struct Binding {
  void* data = nullptr;
  int64_t row_stride = 0;
  int64_t col_stride = 1;
  float scalar = 0.0f;
};

// A kernel's workspace: [epilogue scratch | GEMM workspace (fused GEMM kernels)], each 64-byte
// aligned. The epilogue's part depends only on the thread count; it must be zeroed before its
// first use and is then kept across runs of the same kernel (epilogue/block_epilogue.h).
struct WorkspaceSizes {
  size_t epilogue_bytes = 0;
  size_t gemm_bytes = 0;
  size_t total() const { return epilogue_bytes + gemm_bytes; }
};

enum class KernelMode : uint32_t { kQuery, kRun };

// What the params of every kernel kind carry besides their own operands: the bindings, the
// query/run protocol and the error buffer.
struct KernelCall {
  KernelMode mode = KernelMode::kRun;
  const Binding* bindings = nullptr;  // in EpilogueDag::operands order
  int64_t num_bindings = 0;
  // kRun: workspace_bytes >= sizes->total(), 64-byte aligned. kQuery: the kernel writes *sizes.
  void* workspace = nullptr;
  size_t workspace_bytes = 0;
  WorkspaceSizes* sizes = nullptr;
  // If the kernel fails (an argument a node rejects), it writes the message here.
  char* error = nullptr;
  size_t error_capacity = 0;
};

struct EpilogueParams {
  KernelCall call;
  GemmShape problem;
  BlockGrid grid;
  const AccBlock* blocks = nullptr;
  int64_t num_blocks = 0;
};

}  // namespace tg::evg::driver
