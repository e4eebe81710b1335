#include "tilegraph/core/graph.h"

#include <utility>

#include "tilegraph/core/error.h"

namespace tg {

Graph Graph::build(std::span<Tensor* const> outputs) {
  Graph graph;
  for (Tensor* output : outputs) graph.expand(output);
  return graph;
}

void Graph::expand(Tensor* output) {
  if (!output) throw Error("graph: output tensor is null");
  const size_t n_nodes = nodes_.size(), n_leafs = leafs_.size();
  try {
    visit(output);
  } catch (...) {
    // A cycle leaves tensors half-visited: undo everything this call added, so that the graph
    // is usable again once the cycle is fixed. Rare, so the map is rebuilt rather than tracked.
    nodes_.resize(n_nodes);
    leafs_.resize(n_leafs);
    source_begin_.resize(n_nodes + 1);
    source_refs_.resize(source_begin_.back());
    refs_.clear();
    for (size_t i = 0; i < n_nodes; ++i) refs_.try_emplace(nodes_[i], SourceRef(i));
    for (size_t l = 0; l < n_leafs; ++l) refs_.try_emplace(leafs_[l], leaf_ref(l));
    throw;
  }
  output->flags |= kFlagOutput;
  outputs_.push_back(output);
}

// Post-order depth-first walk over sources, iterative so that very deep graphs (long chains of
// thousands of nodes) cannot overflow the stack.
void Graph::visit(Tensor* root) {
  if (!refs_.try_emplace(root, kNoSource).second) return;
  std::vector<std::pair<Tensor*, int>> stack{{root, 0}};
  while (!stack.empty()) {
    auto& [tensor, next_src] = stack.back();
    // Skip to the next source not seen yet in one tight loop: one stack round trip per source
    // cost most of a graph build.
    int j = next_src;
    while (j < kMaxSrc && !(tensor->src[j] && refs_.try_emplace(tensor->src[j], kNoSource).second)) ++j;
    if (j < kMaxSrc) {
      next_src = j + 1;
      stack.emplace_back(tensor->src[j], 0);
      continue;
    }
    if (tensor->op == Op::NONE) {
      *refs_.find(tensor) = leaf_ref(leafs_.size());
      leafs_.push_back(tensor);
    } else {
      int n_sources = kMaxSrc;
      while (n_sources > 0 && !tensor->src[n_sources - 1]) --n_sources;
      for (int j = 0; j < n_sources; ++j) {
        const SourceRef ref = tensor->src[j] ? *refs_.find(tensor->src[j]) : kNoSource;
        if (tensor->src[j] && ref == kNoSource) throw Error("graph: cycle through " + describe(*tensor));
        source_refs_.push_back(ref);
      }
      *refs_.find(tensor) = SourceRef(nodes_.size());
      nodes_.push_back(tensor);
      source_begin_.push_back(uint32_t(source_refs_.size()));
    }
    stack.pop_back();
  }
}

SourceRef Graph::ref_of(const Tensor* t) const {
  const SourceRef* ref = refs_.find(t);
  return ref ? *ref : kNoSource;
}

}  // namespace tg
