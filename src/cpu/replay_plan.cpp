#include "replay_plan.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <span>
#include <string>

#include "fusion.h"
#include "row_ops.h"
#include "tilegraph/core/error.h"

namespace tg::cpu {

namespace {

size_t shadow_index(SourceRef ref, size_t n_nodes) { return ref >= 0 ? size_t(ref) : n_nodes + size_t(-1 - ref); }

// A step's work: multiply-adds for a MUL_MAT, query elements x keys for attention, else
// elements read or written. Below kSoloWork (kSoloMultiplyAdds for a MUL_MAT on the GEMM) a step
// would run as one task anyway: ExecContext::tasks_for gives one task under twice its 16 Ki
// elements, and the GEMM cuts no second block under twice BlockScheduler::kMinBlockWork
// multiply-adds.
constexpr int64_t kSoloWork = 32 * 1024;
constexpr int64_t kSoloMultiplyAdds = 256 * 1024;
// A group shares a pool region only with at least this much work in total: waking a second thread
// costs about as much as a few thousand multiply-adds (measured at d_model 64, where grouping
// Q/K/V projections of 4 Ki multiply-adds each made decode steps slower).
constexpr int64_t kMinGroupWork = 32 * 1024;

int64_t step_work(std::span<const Tensor* const> nodes) {
  const Tensor& first = *nodes.front();
  if (first.op == Op::MUL_MAT) return first.src[0]->ne[0] * first.nelements();
  if (first.op == Op::FLASH_ATTN_EXT) return first.src[0]->nelements() * first.src[1]->ne[1];
  int64_t elements = 0;
  for (const Tensor* node : nodes) {
    elements += std::max(node->nelements(), node->src[0] ? node->src[0]->nelements() : 0);
  }
  return elements;
}

// `on_gemm`: the step is a MUL_MAT on the GEMM (the blocked fallback splits like other kernels).
bool runs_as_one_task(std::span<const Tensor* const> nodes, bool on_gemm) {
  return step_work(nodes) < (on_gemm ? kSoloMultiplyAdds : kSoloWork);
}

// The memory a step writes: its last node's result (a chain stores nothing else).
Extent written_by(std::span<const Tensor* const> nodes) { return extent_of(*nodes.back()); }

// Steps grouped with each other at most; grouping compares every pair.
constexpr uint32_t kMaxGroupSteps = 16;

}  // namespace

ReplayPlan::ReplayPlan(const Graph& graph, Kernel (*kernel_for)(Op), const ExecContext& exec, bool fuse)
    : threads_(exec.max_threads()) {
  const size_t n_nodes = graph.size();
  shadows_.reserve(n_nodes + graph.leafs().size());
  for (const Tensor* t : graph.nodes()) shadows_.emplace_back(*t);
  for (const Tensor* t : graph.leafs()) shadows_.emplace_back(*t);
  for (size_t i = 0; i < n_nodes; ++i) {
    Tensor& shadow = shadows_[i];
    for (int j = 0; j < kMaxSrc; ++j) {
      const SourceRef ref = graph.source(i, j);
      shadow.src[j] = ref == kNoSource ? nullptr : &shadows_[shadow_index(ref, n_nodes)];
    }
    if (shadow.view_src) {
      const SourceRef ref = graph.ref_of(shadow.view_src);
      shadow.view_src = ref == kNoSource ? nullptr : &shadows_[shadow_index(ref, n_nodes)];
    }
  }

  ExecutedNodes executed;
  executed.collect(graph, [&](size_t i) { return &shadows_[i]; });
  std::vector<const Tensor*> chain;
  for (size_t e = 0; e < executed.size(); ++e) {
    const Tensor& node = executed[e];
    const bool gemm_takes = node.op == Op::MUL_MAT && mul_mat_uses_gemm(node);
    const bool quant_gemm_takes = !gemm_takes && mul_mat_uses_quant_gemm(node);
    const ChainKind kind = chain_kind(node, gemm_takes || quant_gemm_takes);
    if (fuse && kind != ChainKind::kNone) {
      grow_chain(executed, e, kind, chain);
    } else {
      chain.assign(1, &node);
    }
    Step step{};
    step.solo = threads_ > 1 && runs_as_one_task(chain, gemm_takes);
    step.chain_begin = uint32_t(chain_nodes_.size());
    chain_nodes_.insert(chain_nodes_.end(), chain.begin(), chain.end());
    step.chain_end = uint32_t(chain_nodes_.size());
    if (gemm_takes) {
      step.kind = StepKind::kMatmul;
      step.matmul_call = uint32_t(matmul_calls_.size());
      matmul_calls_.push_back(*prepare_matmul(node, exec.vec().isa, step.solo ? 1 : threads_));
    } else if (quant_gemm_takes && chain.size() > 1) {
      step.kind = StepKind::kQuantMatmul;
    } else if (chain.size() > 1) {
      step.kind = StepKind::kRowChain;
    } else {
      step.kind = StepKind::kKernel;
      step.kernel = kernel_for(node.op);
    }
    steps_.push_back(step);
    if (chain.size() > 1) fused_nodes_ += chain.size();
    e += chain.size() - 1;
  }
  groups_.reserve(steps_.size());  // re-grouping after a rebind allocates nothing
  group_steps();
}

bool ReplayPlan::independent(const Step& a, const Step& b) const {
  const std::span<const Tensor*const> na = chain(a), nb = chain(b);
  const Extent wa = written_by(na), wb = written_by(nb);
  return !wa.overlaps(wb) && !chain_reads(nb, wa) && !chain_reads(na, wb);
}

void ReplayPlan::group_steps() {
  groups_.clear();
  for (uint32_t first = 0; first < steps_.size();) {
    uint32_t end = first + 1;
    if (steps_[first].solo) {
      for (; end < steps_.size() && end - first < kMaxGroupSteps && steps_[end].solo; ++end) {
        bool clear = true;
        for (uint32_t k = first; k < end && clear; ++k) clear = independent(steps_[k], steps_[end]);
        if (!clear) break;
      }
    }
    int64_t work = 0;
    for (uint32_t k = first; k < end; ++k) work += step_work(chain(steps_[k]));
    if (work < kMinGroupWork) {
      for (uint32_t k = first; k < end; ++k) groups_.push_back({k, 1});
    } else {
      groups_.push_back({first, end - first});
    }
    first = end;
  }
}

size_t ReplayPlan::grouped_step_count() const {
  size_t steps = 0;
  for (const Group& g : groups_) steps += g.count > 1 ? g.count : 0;
  return steps;
}

void ReplayPlan::run_step(const Step& step, ExecContext& exec) const {
  const std::span<const Tensor* const> nodes = chain(step);
  try {
    switch (step.kind) {
      case StepKind::kKernel: step.kernel(*nodes.front(), exec); break;
      case StepKind::kRowChain: run_row_op_chain(nodes, exec); break;
      case StepKind::kMatmul:
        run_matmul(matmul_calls_[step.matmul_call], *nodes.front(), nodes.subspan(1), exec);
        break;
      case StepKind::kQuantMatmul: run_quant_matmul(*nodes.front(), nodes.subspan(1), exec); break;
    }
  } catch (const std::exception& e) {
    throw node_error(*nodes.front(), e);
  }
}

void ReplayPlan::run(ExecContext& exec, std::span<ExecContext> solo) const {
  if (exec.max_threads() != threads_ || (threads_ > 1 && solo.size() < size_t(threads_))) {
    throw Error("cpu: replay: the plan was captured for " + std::to_string(threads_) + " threads, not " +
                std::to_string(exec.max_threads()));
  }
  for (const Group& group : groups_) {
    const Step& first = steps_[group.first];
    if (group.count == 1) {
      run_step(first, first.solo ? solo[0] : exec);
      continue;
    }
    // Each task takes whole steps on its own single-thread context; tasks run concurrently only
    // under distinct indices, so no two threads share a context.
    std::atomic<uint32_t> next{0};
    exec.parallel(int(std::min<uint32_t>(group.count, uint32_t(threads_))), [&](const ThreadContext& tc) {
      for (uint32_t k; (k = next.fetch_add(1, std::memory_order_relaxed)) < group.count;) {
        run_step(steps_[group.first + k], solo[size_t(tc.ith)]);
      }
    });
  }
}

bool ReplayPlan::rebind(const Graph& graph) {
  const size_t n_nodes = graph.size();
  for (size_t i = 0; i < n_nodes; ++i) shadows_[i].data = graph.nodes()[i]->data;
  for (size_t i = 0; i < graph.leafs().size(); ++i) shadows_[n_nodes + i].data = graph.leafs()[i]->data;
  // Fusion decisions and step groups depend on where the results live.
  for (const Step& step : steps_) {
    if (step.chain_end - step.chain_begin > 1 && !chain_output_is_clear(chain(step))) return false;
  }
  group_steps();
  return true;
}

size_t ReplayPlan::bytes() const {
  return sizeof(*this) + shadows_.capacity() * sizeof(Tensor) + steps_.capacity() * sizeof(Step) +
         groups_.capacity() * sizeof(Group) + chain_nodes_.capacity() * sizeof(const Tensor*) +
         matmul_calls_.capacity() * sizeof(MatmulCall);
}

}  // namespace tg::cpu
