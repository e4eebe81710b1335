#include "cpu/replay_plan.h"

#include <exception>
#include <span>
#include <string>

#include "cpu/row_io.h"
#include "cpu/row_ops.h"
#include "tilegraph/core/error.h"

namespace tg::cpu {

namespace {

size_t shadow_index(SourceRef ref, size_t n_nodes) {
  return ref >= 0 ? size_t(ref) : n_nodes + size_t(-1 - ref);
}

// The storage a tensor's bytes live in and their extent, for overlap tests.
struct Extent {
  const char* begin;
  const char* end;
  bool overlaps(const Extent& o) const { return begin < o.end && o.begin < end; }
};
Extent extent_of(const Tensor& t) {
  const char* p = static_cast<const char*>(t.data);
  return {p, p + t.nbytes()};
}

// Whether `next` can take `current`'s result as its first operand inside a fused chain:
// both f32 row ops of one shape, `current` read by nobody else, and no other operand of `next`
// being `current`.
bool extends_chain(const Tensor& current, const Tensor& next, int consumers_of_current) {
  if (!is_row_op(next.op) || next.type != DType::F32 || next.src[0] != &current) return false;
  if (consumers_of_current != 1 || (current.flags & (kFlagOutput | kFlagInput))) return false;
  if (!same_shape(current, next) || next.is_empty()) return false;
  if (next.op == Op::GLU && !next.src[1]) return false;  // the halves form needs a 2n-wide input
  for (int j = 1; j < kMaxSrc; ++j) {
    if (next.src[j] == &current) return false;
  }
  return true;
}

// Whether `next` can be part of a mul_mat's epilogue after `current`: extends_chain, applied to
// each accumulator block's segment of the rows.
bool extends_matmul_chain(const Tensor& current, const Tensor& next, int consumers_of_current) {
  return extends_chain(current, next, consumers_of_current) && is_segment_op(next) &&
         is_f32_row_contiguous(next) && next.ne[0] > 0;
}

// Whether the chain's last result is clear of every operand the chain reads, other than the
// chain value itself (the allocator may have given it the memory of an operand whose last reader
// is inside the chain, which an unfused run would have read before the write).
bool chain_output_is_clear(std::span<const Tensor* const> chain) {
  const Extent out = extent_of(*chain.back());
  for (size_t k = 0; k < chain.size(); ++k) {
    for (const Tensor* src : chain[k]->src) {
      const bool is_chain_value = k > 0 && src == chain[k - 1];
      if (src && !is_chain_value && !src->is_empty() && out.overlaps(extent_of(*src))) return false;
    }
  }
  return true;
}

}  // namespace

ReplayPlan::ReplayPlan(const Graph& graph, Kernel (*kernel_for)(Op)) {
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

  // Consumers per node, views included, to know which intermediates a fusion may skip.
  std::vector<int> consumers(n_nodes, 0);
  for (size_t i = 0; i < n_nodes; ++i) {
    for (SourceRef ref : graph.src_refs()[i]) {
      if (ref >= 0) ++consumers[size_t(ref)];
    }
  }

  std::vector<size_t> executed;
  for (size_t i = 0; i < n_nodes; ++i) {
    if (!shadows_[i].is_noop()) executed.push_back(i);
  }
  for (size_t e = 0; e < executed.size(); ++e) {
    const size_t i = executed[e];
    const Tensor& node = shadows_[i];
    const bool row_chain = is_row_op(node.op) && node.type == DType::F32;
    const bool matmul_chain = node.op == Op::MUL_MAT && mul_mat_uses_gemm(node);
    if (!row_chain && !matmul_chain) {
      steps_.push_back({StepKind::kKernel, kernel_for(node.op), &node, 0, 0});
      continue;
    }
    // Grow a chain through the following executed nodes, then shorten it until its output is
    // clear of its operands.
    const auto extends = matmul_chain ? extends_matmul_chain : extends_chain;
    std::vector<const Tensor*> chain{&node};
    while (e + chain.size() < executed.size()) {
      const size_t current = executed[e + chain.size() - 1];
      const size_t next = executed[e + chain.size()];
      if (!extends(shadows_[current], shadows_[next], consumers[current])) break;
      chain.push_back(&shadows_[next]);
    }
    while (chain.size() > 1 && !chain_output_is_clear(chain)) chain.pop_back();
    if (chain.size() == 1) {
      steps_.push_back({StepKind::kKernel, kernel_for(node.op), &node, 0, 0});
      continue;
    }
    const auto begin = uint32_t(chain_nodes_.size());
    chain_nodes_.insert(chain_nodes_.end(), chain.begin(), chain.end());
    steps_.push_back({matmul_chain ? StepKind::kMatmulChain : StepKind::kRowChain, nullptr, chain.back(), begin,
                      uint32_t(chain_nodes_.size())});
    fused_nodes_ += chain.size();
    e += chain.size() - 1;
  }
}

void ReplayPlan::run(ExecContext& exec) const {
  for (const Step& step : steps_) {
    try {
      switch (step.kind) {
        case StepKind::kKernel: step.kernel(*step.node, exec); break;
        case StepKind::kRowChain: run_row_op_chain(chain(step), exec); break;
        case StepKind::kMatmulChain: run_mul_mat_chain(chain(step), exec); break;
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
    if (step.kind != StepKind::kKernel && !chain_output_is_clear(chain(step))) return false;
  }
  return true;
}

size_t ReplayPlan::bytes() const {
  return sizeof(*this) + shadows_.capacity() * sizeof(Tensor) + steps_.capacity() * sizeof(Step) +
         chain_nodes_.capacity() * sizeof(const Tensor*);
}

}  // namespace tg::cpu
