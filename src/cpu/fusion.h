#pragma once
// Which consecutive nodes run as one kernel, for eager execution and replay plans alike:
//   - a row chain: f32 row ops of one shape, each reading the previous result as its first
//     operand, run in one pass over the rows (run_row_op_chain);
//   - a matmul chain: a mul_mat the GEMM takes, then such row ops applied to each accumulator
//     block as the GEMM's epilogue (run_matmul); or one the integer GEMM takes, the ops applied
//     to each finished tile (run_quant_matmul).
// A chain only absorbs a result that nothing else reads, and it stops short of any output that
// the allocator placed over an operand, so fused and unfused runs give the same bits.
#include <cstddef>
#include <span>
#include <vector>

#include "extent.h"
#include "tilegraph/core/graph.h"

namespace tg::cpu {

enum class ChainKind { kNone, kRow, kMatmul };

// The kind of chain `node` can start. `gemm_takes_matmul` says whether one of the GEMMs runs it
// (the caller has prepared its MatmulCall, or asks mul_mat_uses_gemm or mul_mat_uses_quant_gemm).
ChainKind chain_kind(const Tensor& node, bool gemm_takes_matmul);

// A graph's executed nodes in order (no-ops dropped), each with how many source slots of the
// graph's nodes read it (views included): what fusion decides on. Kept between graphs, it
// allocates nothing once grown.
class ExecutedNodes {
 public:
  // `node_at(i)` is the tensor standing for graph node i: the node itself, or a replay plan's
  // copy of it.
  template <class NodeAt>
  void collect(const Graph& graph, NodeAt node_at) {
    count_consumers(graph);
    nodes_.clear();
    consumers_.clear();
    for (size_t i = 0; i < graph.size(); ++i) {
      const Tensor* node = node_at(i);
      if (node->is_noop()) continue;
      nodes_.push_back(node);
      consumers_.push_back(all_consumers_[i]);
    }
  }

  size_t size() const { return nodes_.size(); }
  const Tensor& operator[](size_t e) const { return *nodes_[e]; }
  std::span<const Tensor* const> nodes() const { return nodes_; }
  std::span<const int> consumers() const { return consumers_; }

 private:
  void count_consumers(const Graph& graph);

  std::vector<const Tensor*> nodes_;
  std::vector<int> consumers_;      // per executed node
  std::vector<int> all_consumers_;  // per graph node
};

// Fills `chain` with executed[e] followed by the executed nodes that fuse into the chain it
// starts (`kind` from chain_kind, not kNone).
void grow_chain(const ExecutedNodes& executed, size_t e, ChainKind kind, std::vector<const Tensor*>& chain);

// Whether the chain reads memory within `extent` through any operand other than the chain
// value each node passes to the next.
bool chain_reads(std::span<const Tensor* const> chain, const Extent& extent);

// Whether the chain's last result is clear of every operand the chain reads, other than the
// chain value itself (the allocator may have given it the memory of an operand whose last reader
// is inside the chain, which an unfused run would have read before the write).
inline bool chain_output_is_clear(std::span<const Tensor* const> chain) {
  return !chain_reads(chain, extent_of(*chain.back()));
}

}  // namespace tg::cpu
