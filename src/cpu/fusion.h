#pragma once
// Which consecutive nodes run as one kernel, for eager execution and replay plans alike:
//   - a row chain: f32 row ops of one shape, each reading the previous result as its first
//     operand, run in one pass over the rows (run_row_op_chain);
//   - a matmul chain: a mul_mat the GEMM takes, then such row ops applied to each accumulator
//     block as the GEMM's epilogue (run_mul_mat_chain / run_matmul).
// A chain only absorbs a result that nothing else reads, and it stops short of any output that
// the allocator placed over an operand, so fused and unfused runs give the same bits.
#include <cstddef>
#include <span>
#include <vector>

#include "tilegraph/core/graph.h"

namespace tg::cpu {

enum class ChainKind { kNone, kRow, kMatmul };

// The kind of chain `node` can start. `gemm_takes_matmul` says whether the GEMM runs it (the
// caller knows, or asks mul_mat_uses_gemm).
ChainKind chain_kind(const Tensor& node, bool gemm_takes_matmul);

// Per node of `graph`, how many source slots of the graph's nodes refer to it (views included).
void count_consumers(const Graph& graph, std::vector<int>& consumers);

// Fills `chain` with executed[e] followed by the executed nodes that fuse into the chain it
// starts (`kind` from chain_kind, not kNone). consumers[i] counts the readers of executed[i].
void grow_chain(std::span<const Tensor* const> executed, std::span<const int> consumers, size_t e, ChainKind kind,
                std::vector<const Tensor*>& chain);

// Whether the chain's last result is clear of every operand the chain reads, other than the
// chain value itself (the allocator may have given it the memory of an operand whose last reader
// is inside the chain, which an unfused run would have read before the write).
bool chain_output_is_clear(std::span<const Tensor* const> chain);

}  // namespace tg::cpu
