#pragma once
// A mul_mat node's GEMM call with everything that follows from the node's shapes and strides and
// the thread count worked out once: the operand layouts, the problem, how batches spread over
// threads and the GEMM's plan. Eager execution prepares one per call; a replay plan prepares one
// per node at capture, so that replay goes straight to the blocks.
#include <cstdint>
#include <optional>
#include <span>

#include "gemm.h"
#include "kernels.h"
#include "tilegraph/core/tensor.h"

namespace tg::cpu {

struct MatmulCall {
  const GemmKernels* kernels;
  evg::MatrixOperand a, b;  // one batch's layouts; data set per batch from the node's sources
  // The activations (the GEMM's A) are b rounded to bf16 into scratch first, [B3, B2, N, K]
  // (bf16 weights, quant.h).
  bool rounds_activations;
  int64_t ldd;     // D's row stride in floats
  int64_t r2, r3;  // broadcast of the weights over the batch dims
  int64_t batches;
  // Every task runs whole GEMMs, one batch at a time (many batches, or each too small to split);
  // otherwise the batches run one after another, each split over all threads.
  bool batches_in_parallel;
  int tasks;      // tasks of the batch-parallel region
  GemmPlan plan;  // one batch's GEMM, on 1 thread when batches_in_parallel, else on all
};

// The call for `node` on `threads` threads with the GEMM of `isa`, or nothing when the GEMM does
// not take the node (quantized weights, views with no unit stride: run_mul_mat_fallback).
std::optional<MatmulCall> prepare_matmul(const Tensor& node, Isa isa, int threads);

// Runs `call` (prepared for node's shapes and exec's thread count) on node's data, storing into
// node; or, with `epilogue_ops` (row ops with is_segment_op, row_ops.h, each reading the previous
// result as its first operand, the first reading node), applies them to each accumulator block
// as the GEMM's epilogue and stores only the last result. The caller guarantees that nothing
// else reads the intermediate results and that the last result's memory overlaps no operand
// (fusion.h). Bit-identical to running the nodes one by one.
void run_matmul(const MatmulCall& call, const Tensor& node, std::span<const Tensor* const> epilogue_ops,
                ExecContext& exec);

}  // namespace tg::cpu
