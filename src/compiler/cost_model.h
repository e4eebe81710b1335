#pragma once
// Clock cycles and scratch space of an op on one TX8 tile, estimated from its core node, for the
// ops and slices the C-model's op library has no cost for (OpCost.h asks the library first). The
// one place these numbers come from:
//   cycles = max(flops / engine throughput, operand and result bytes / SPM bandwidth) + issue,
//   engine throughput: the matrix engine (NE) 1024 flop/cycle, the vector engine (CT) 64
//   flop/cycle, DMA-only ops 0 flops; SPM bandwidth 128 bytes/cycle; issue 64 cycles per op.
//   flops: matmul 2MNK, conv 2 * output * Cin * KH * KW, attention 2 * n_q * n_kv * H * (D + Dv)
//   plus the softmax, the rest a per-element cost (1 for arithmetic, 4 for transcendental
//   functions, 5 for normalizations and softmax).
//   scratch: batchnorm 2 * input bytes (x - mean and the normalized value, as the op library's
//   batchnorm keeps), row ops on f16/bf16 one f32 copy of the input, a quantized matmul the
//   8-bit rounded right-hand side (N * K bytes), attention one f32 score row per query and
//   head (n_kv * 4 * H * n_q), everything else none.
#include <cstdint>

#include "tilegraph/core/tensor.h"

namespace tg::compiler {

enum class EngineKind { Matrix, Vector, Dma };

uint64_t estimate_cycles(const Tensor& node, EngineKind engine);
uint32_t estimate_scratch_bytes(const Tensor& node);

}  // namespace tg::compiler
