#include "fusion.h"

#include "row_io.h"
#include "row_ops.h"

namespace tg::cpu {

namespace {

// Whether `next` can take `current`'s result as an operand inside a fused chain: both f32 row
// ops of one shape, `current` read by nobody else and by `next` once, as its first operand or as
// the second of a binary op (the residual add(x, mul_mat(...))).
//
// Not as GLU's second operand: in swiglu(mul_mat(w_gate, h), mul_mat(w_up, h)) that would make
// the up projection's step wait for the gate's, which replay otherwise runs side by side with it
// on two threads; decode steps at d_model 256 went from 1.1x to 0.9x eager (bench/RESULTS.md).
bool extends_row_chain(const Tensor& current, const Tensor& next, int consumers_of_current) {
  if (!is_row_op(next.op) || next.type != DType::F32) return false;
  if (consumers_of_current != 1 || (current.flags & (kFlagOutput | kFlagInput))) return false;
  if (!same_shape(current, next) || next.is_empty()) return false;
  if (next.op == Op::GLU && !next.src[1]) return false;  // the halves form needs a 2n-wide input
  const bool second_operand_allowed =
      next.op == Op::ADD || next.op == Op::SUB || next.op == Op::MUL || next.op == Op::DIV;
  int reads = 0;
  for (int j = 0; j < kMaxSrc; ++j) reads += next.src[j] == &current;
  return reads == 1 && (next.src[0] == &current || (second_operand_allowed && next.src[1] == &current));
}

// Whether `next` can be part of a mul_mat's epilogue after `current`: a row-chain link applied
// to each accumulator block's segment of the rows.
bool extends_matmul_chain(const Tensor& current, const Tensor& next, int consumers_of_current) {
  return extends_row_chain(current, next, consumers_of_current) &&
         is_segment_op(next, chain_value_slot(next, current)) && is_f32_row_contiguous(next) && next.ne[0] > 0;
}

}  // namespace

ChainKind chain_kind(const Tensor& node, bool gemm_takes_matmul) {
  if (is_row_op(node.op) && node.type == DType::F32) return ChainKind::kRow;
  if (node.op == Op::MUL_MAT && gemm_takes_matmul) return ChainKind::kMatmul;
  return ChainKind::kNone;
}

void ExecutedNodes::count_consumers(const Graph& graph) {
  all_consumers_.assign(graph.size(), 0);
  for (size_t i = 0; i < graph.size(); ++i) {
    for (SourceRef ref : graph.sources(i)) {
      if (ref >= 0) ++all_consumers_[size_t(ref)];
    }
  }
  // A view reads its base's memory even where it does not list the base as a source (one built
  // with Context::new_view, a leaf then): the base must be stored, not fused away.
  auto count_view = [&](const Tensor* t) {
    if (!t->view_src || t->src[0] == t->view_src) return;
    if (const SourceRef ref = graph.ref_of(t->view_src); ref >= 0) ++all_consumers_[size_t(ref)];
  };
  for (const Tensor* node : graph.nodes()) count_view(node);
  for (const Tensor* leaf : graph.leafs()) count_view(leaf);
}

void grow_chain(const ExecutedNodes& executed, size_t e, ChainKind kind, std::vector<const Tensor*>& chain) {
  const auto extends = kind == ChainKind::kMatmul ? extends_matmul_chain : extends_row_chain;
  const std::span<const Tensor* const> nodes = executed.nodes();
  chain.assign(1, nodes[e]);
  while (e + chain.size() < nodes.size()) {
    const size_t current = e + chain.size() - 1;
    if (!extends(*nodes[current], *nodes[current + 1], executed.consumers()[current])) break;
    chain.push_back(nodes[current + 1]);
  }
  while (chain.size() > 1 && !chain_output_is_clear(chain)) chain.pop_back();
}

bool chain_reads(std::span<const Tensor* const> chain, const Extent& extent) {
  for (size_t k = 0; k < chain.size(); ++k) {
    for (const Tensor* src : chain[k]->src) {
      const bool is_chain_value = k > 0 && src == chain[k - 1];
      if (src && !is_chain_value && !src->is_empty() && extent.overlaps(extent_of(*src))) return true;
    }
  }
  return false;
}

}  // namespace tg::cpu
