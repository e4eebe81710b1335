#pragma once
// The CPU backend's captured graph: a flat array of pre-resolved kernel calls over private
// copies ("shadows") of the graph's tensors, so replay needs neither the Graph nor its Tensor
// objects — per-step graphs are rebuilt and freed — and allocates nothing. No-op nodes are
// dropped; chains of row ops whose intermediates nobody else reads run as one fused pass, and
// elementwise ops after a mul_mat run as the GEMM's epilogue (EVG fusion).
#include <cstdint>
#include <span>
#include <vector>

#include "cpu/kernels.h"
#include "cpu/matmul_call.h"
#include "tilegraph/core/graph.h"
#include "tilegraph/runtime/backend.h"

namespace tg::cpu {

class ReplayPlan final : public CapturedGraph {
 public:
  // `kernel_for` maps an op to its kernel (the backend's own table); `exec` is the context the
  // plan will run in (its ISA and thread count are resolved into the steps); `fuse` allows the
  // chains of fusion.h.
  ReplayPlan(const Graph& graph, Kernel (*kernel_for)(Op), const ExecContext& exec, bool fuse);

  // Runs every step; errors name the failing node like the eager path does.
  void run(ExecContext& exec) const;
  // Points the shadows at the data of `graph`, which has this plan's structure (the graph
  // cache verified it), e.g. after inputs moved. False when the new addresses invalidate a
  // fusion: the plan must then be captured again.
  bool rebind(const Graph& graph);

  size_t bytes() const override;
  size_t step_count() const { return steps_.size(); }
  size_t fused_node_count() const { return fused_nodes_; }

 private:
  enum class StepKind : uint8_t {
    kKernel,       // one node through its kernel
    kRowChain,     // row ops in one pass over the rows (run_row_op_chain)
    kMatmul,       // a mul_mat on the GEMM through its prepared call, with the rest of its
                   // chain (row ops, maybe none) as the GEMM's epilogue
  };
  struct Step {
    StepKind kind;
    Kernel kernel;          // for kKernel
    const Tensor* node;     // the shadow to run (the chain's last node for a chain)
    uint32_t chain_begin;   // [chain_begin, chain_end) in chain_nodes_ for a chain or kMatmul
    uint32_t chain_end;
    uint32_t matmul_call;   // index in matmul_calls_ for kMatmul
  };

  std::span<const Tensor* const> chain(const Step& step) const {
    return {chain_nodes_.data() + step.chain_begin, step.chain_end - step.chain_begin};
  }

  std::vector<Tensor> shadows_;  // graph nodes, then leafs, in graph order
  std::vector<Step> steps_;
  std::vector<const Tensor*> chain_nodes_;
  std::vector<MatmulCall> matmul_calls_;
  int threads_;  // the thread count the matmul calls were prepared for
  size_t fused_nodes_ = 0;
};

}  // namespace tg::cpu
