#pragma once
// The ABI between the host (frontend/compiled_epilogue.h) and a JIT-compiled epilogue kernel:
//   run(block_num, stream, params)   block_num = number of AccBlocks (must equal num_blocks),
//                                    stream = const Launcher* (nullptr: run serially),
//                                    params = const EpilogueParams*.
// Plain C types only, so it crosses the dlopen boundary.
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

struct EpilogueParams {
  GemmShape problem;
  BlockGrid grid;
  const AccBlock* blocks = nullptr;
  int64_t num_blocks = 0;
  const Binding* bindings = nullptr;  // in EpilogueDag::operands order
  int64_t num_bindings = 0;
  // If the kernel fails (an argument a node rejects), it writes the message here.
  char* error = nullptr;
  size_t error_capacity = 0;
};

}  // namespace tg::evg::driver
