#pragma once
// The CPU backend's captured graph: a flat array of pre-resolved kernel calls over private
// copies ("shadows") of the graph's tensors, so replay needs neither the Graph nor its Tensor
// objects — per-step graphs are rebuilt and freed — and allocates nothing. No-op nodes are
// dropped; chains of row ops whose intermediates nobody else reads run as one fused pass, and
// elementwise ops after a mul_mat run as the GEMM's epilogue (EVG fusion).
//
// Steps too small to split over threads run whole on one thread each; consecutive ones that do
// not touch each other's memory form a group that shares one thread-pool region, so decode-sized
// steps run side by side (the Q, K and V projections; gate and up) with a join only where the
// next step needs the results of the last.
#include <cstdint>
#include <span>
#include <vector>

#include "kernels.h"
#include "matmul_call.h"
#include "tilegraph/core/graph.h"
#include "tilegraph/runtime/backend.h"

namespace tg::cpu {

class ReplayPlan final : public CapturedGraph {
 public:
  // `kernel_for` maps an op to its kernel (the backend's own table); `exec` is the context the
  // plan will run in (its ISA and thread count are resolved into the steps); `fuse` allows the
  // chains of fusion.h.
  ReplayPlan(const Graph& graph, Kernel (*kernel_for)(Op), const ExecContext& exec, bool fuse);

  // Runs every step; errors name the failing node like the eager path does. `solo` holds one
  // single-thread context per thread of `exec` (unused with one thread), for the steps that run
  // whole on one thread.
  void run(ExecContext& exec, std::span<ExecContext> solo) const;
  // Points the shadows at the data of `graph`, which has this plan's structure (the graph
  // cache verified it), e.g. after inputs moved. False when the new addresses invalidate a
  // fusion: the plan must then be captured again.
  bool rebind(const Graph& graph);

  size_t bytes() const override;
  size_t step_count() const { return steps_.size(); }
  size_t fused_node_count() const { return fused_nodes_; }
  // Steps in groups of more than one, which run side by side.
  size_t grouped_step_count() const;

 private:
  enum class StepKind : uint8_t {
    kKernel,       // one node through its kernel
    kRowChain,     // row ops in one pass over the rows (run_row_op_chain)
    kMatmul,       // a mul_mat on the GEMM through its prepared call, with the rest of its chain
                   // (row ops, maybe none) as the GEMM's epilogue
    kQuantMatmul,  // a mul_mat on the integer GEMM with the rest of its chain (row ops) as its
                   // epilogue
  };
  struct Step {
    StepKind kind;
    bool solo;             // runs whole on one thread (a single-thread context)
    Kernel kernel;         // for kKernel
    uint32_t chain_begin;  // the step's nodes: [chain_begin, chain_end) in chain_nodes_
    uint32_t chain_end;
    uint32_t matmul_call;  // index in matmul_calls_ for kMatmul
  };
  struct Group {
    uint32_t first, count;  // steps [first, first + count)
  };

  std::span<const Tensor* const> chain(const Step& step) const {
    return {chain_nodes_.data() + step.chain_begin, step.chain_end - step.chain_begin};
  }
  void run_step(const Step& step, ExecContext& exec) const;
  // Whether two steps can run in either order or at once: neither writes what the other reads
  // or writes.
  bool independent(const Step& a, const Step& b) const;
  // groups_ from steps_ and the current addresses.
  void group_steps();

  std::vector<Tensor> shadows_;  // graph nodes, then leafs, in graph order
  std::vector<Step> steps_;
  std::vector<Group> groups_;
  std::vector<const Tensor*> chain_nodes_;
  std::vector<MatmulCall> matmul_calls_;
  int threads_;  // the thread count the plan was made for
  size_t fused_nodes_ = 0;
};

}  // namespace tg::cpu
