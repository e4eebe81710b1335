#pragma once
// A compute graph: the tensors reachable from the outputs, in an order where every node comes
// after its sources (ggml's cgraph). Leafs are tensors with op NONE (weights, inputs); nodes are
// everything else, views included. A tensor appears once however many consumers it has.
#include <cstdint>
#include <span>
#include <vector>

#include "tilegraph/core/tensor.h"
#include "tilegraph/core/tensor_map.h"

namespace tg {

// Where a node's source lives in its graph: a node index (>= 0), a leaf (-1 - leaf index), or
// kNoSource. Lets consumers (graph matching, replay plans) follow edges without a pointer map.
using SourceRef = int32_t;
inline constexpr SourceRef kNoSource = INT32_MIN;
inline constexpr SourceRef leaf_ref(size_t leaf_index) { return -1 - SourceRef(leaf_index); }

class Graph {
 public:
  Graph() = default;
  // The graph computing `outputs`; each output gets kFlagOutput.
  static Graph build(std::span<Tensor* const> outputs);
  static Graph build(Tensor* output) { return build(std::span<Tensor* const>(&output, 1)); }
  // Adds `output` and everything it needs that is not already in the graph. Throws tg::Error for
  // a cycle, leaving the graph as it was.
  void expand(Tensor* output);

  const std::vector<Tensor*>& nodes() const { return nodes_; }
  const std::vector<Tensor*>& leafs() const { return leafs_; }
  const std::vector<Tensor*>& outputs() const { return outputs_; }
  // sources(i)[j] locates nodes()[i]->src[j], for j up to the node's last non-null source (a
  // null source before it is kNoSource).
  std::span<const SourceRef> sources(size_t i) const {
    return {source_refs_.data() + source_begin_[i], source_begin_[i + 1] - source_begin_[i]};
  }
  // sources(i)[j], or kNoSource past the last source.
  SourceRef source(size_t i, int j) const {
    const std::span<const SourceRef> refs = sources(i);
    return size_t(j) < refs.size() ? refs[size_t(j)] : kNoSource;
  }
  size_t size() const { return nodes_.size(); }
  // Where `t` is in this graph (as sources() gives it), or kNoSource if it is not.
  SourceRef ref_of(const Tensor* t) const;
  bool empty() const { return nodes_.empty(); }

 private:
  void visit(Tensor* t);

  std::vector<Tensor*> nodes_;
  std::vector<Tensor*> leafs_;
  std::vector<Tensor*> outputs_;
  // Every node's sources() one after another (graph-mode lookup reads them for every node: one
  // to three refs a node, not kMaxSrc), and where each node's list starts, plus the end.
  std::vector<SourceRef> source_refs_;
  std::vector<uint32_t> source_begin_ = {0};
  TensorMap refs_;  // every visited tensor's SourceRef; kNoSource while open
};

}  // namespace tg
