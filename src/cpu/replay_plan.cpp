#include "cpu/replay_plan.h"

#include <exception>
#include <optional>
#include <span>
#include <string>

#include "cpu/fusion.h"
#include "cpu/row_ops.h"
#include "tilegraph/core/error.h"

namespace tg::cpu {

namespace {

size_t shadow_index(SourceRef ref, size_t n_nodes) {
  return ref >= 0 ? size_t(ref) : n_nodes + size_t(-1 - ref);
}

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
      const SourceRef ref = graph.src_refs()[i][j];
      shadow.src[j] = ref == kNoSource ? nullptr : &shadows_[shadow_index(ref, n_nodes)];
    }
    if (shadow.view_src) {
      const SourceRef ref = graph.ref_of(shadow.view_src);
      shadow.view_src = ref == kNoSource ? nullptr : &shadows_[shadow_index(ref, n_nodes)];
    }
  }

  // Fusion decisions on the executed nodes (no-ops dropped), with each one's reader count.
  std::vector<int> consumers;
  count_consumers(graph, consumers);
  std::vector<const Tensor*> executed;
  std::vector<int> executed_consumers;
  for (size_t i = 0; i < n_nodes; ++i) {
    if (shadows_[i].is_noop()) continue;
    executed.push_back(&shadows_[i]);
    executed_consumers.push_back(consumers[i]);
  }
  std::vector<const Tensor*> chain;
  for (size_t e = 0; e < executed.size(); ++e) {
    const Tensor& node = *executed[e];
    std::optional<MatmulCall> matmul;
    if (node.op == Op::MUL_MAT) matmul = prepare_matmul(node, exec.vec().isa, threads_);
    const ChainKind kind = chain_kind(node, matmul.has_value());
    if (kind == ChainKind::kNone) {
      steps_.push_back({StepKind::kKernel, kernel_for(node.op), &node, 0, 0, 0});
      continue;
    }
    if (fuse) {
      grow_chain(executed, executed_consumers, e, kind, chain);
    } else {
      chain.assign(1, &node);
    }
    if (chain.size() == 1 && kind == ChainKind::kRow) {
      steps_.push_back({StepKind::kKernel, kernel_for(node.op), &node, 0, 0, 0});
      continue;
    }
    const auto begin = uint32_t(chain_nodes_.size());
    chain_nodes_.insert(chain_nodes_.end(), chain.begin(), chain.end());
    const auto end = uint32_t(chain_nodes_.size());
    if (kind == ChainKind::kMatmul) {
      steps_.push_back({StepKind::kMatmul, nullptr, chain.back(), begin, end, uint32_t(matmul_calls_.size())});
      matmul_calls_.push_back(*matmul);
    } else {
      steps_.push_back({StepKind::kRowChain, nullptr, chain.back(), begin, end, 0});
    }
    if (chain.size() > 1) fused_nodes_ += chain.size();
    e += chain.size() - 1;
  }
}

void ReplayPlan::run(ExecContext& exec) const {
  if (exec.max_threads() != threads_) {
    throw Error("cpu: replay: the plan was captured for " + std::to_string(threads_) + " threads, not " +
                std::to_string(exec.max_threads()));
  }
  for (const Step& step : steps_) {
    try {
      switch (step.kind) {
        case StepKind::kKernel: step.kernel(*step.node, exec); break;
        case StepKind::kRowChain: run_row_op_chain(chain(step), exec); break;
        case StepKind::kMatmul: {
          const std::span<const Tensor* const> nodes = chain(step);
          run_matmul(matmul_calls_[step.matmul_call], *nodes.front(), nodes.subspan(1), exec);
          break;
        }
      }
    } catch (const std::exception& e) {
      std::string label(op_name(step.node->op));
      if (step.node->name[0]) label += std::string(" ") + step.node->name;
      throw Error("cpu: replay: " + label + ": " + e.what());
    }
  }
}

bool ReplayPlan::rebind(const Graph& graph) {
  const size_t n_nodes = graph.size();
  for (size_t i = 0; i < n_nodes; ++i) shadows_[i].data = graph.nodes()[i]->data;
  for (size_t i = 0; i < graph.leafs().size(); ++i) shadows_[n_nodes + i].data = graph.leafs()[i]->data;
  // Fusion decisions depend on where the results live.
  for (const Step& step : steps_) {
    if (step.chain_end - step.chain_begin > 1 && !chain_output_is_clear(chain(step))) return false;
  }
  return true;
}

size_t ReplayPlan::bytes() const {
  return sizeof(*this) + shadows_.capacity() * sizeof(Tensor) + steps_.capacity() * sizeof(Step) +
         chain_nodes_.capacity() * sizeof(const Tensor*) + matmul_calls_.capacity() * sizeof(MatmulCall);
}

}  // namespace tg::cpu
