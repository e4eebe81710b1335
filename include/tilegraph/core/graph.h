#pragma once
// A compute graph: the tensors reachable from the outputs, in an order where every node comes
// after its sources (ggml's cgraph). Leafs are tensors with op NONE (weights, inputs); nodes are
// everything else, views included. A tensor appears once however many consumers it has.
#include <span>
#include <unordered_set>
#include <vector>

#include "tilegraph/core/tensor.h"

namespace tg {

class Graph {
 public:
  Graph() = default;
  // The graph computing `outputs`; each output gets kFlagOutput.
  static Graph build(std::span<Tensor* const> outputs);
  static Graph build(Tensor* output) { return build(std::span<Tensor* const>(&output, 1)); }
  // Adds `output` and everything it needs that is not already in the graph.
  void expand(Tensor* output);

  const std::vector<Tensor*>& nodes() const { return nodes_; }
  const std::vector<Tensor*>& leafs() const { return leafs_; }
  const std::vector<Tensor*>& outputs() const { return outputs_; }
  size_t size() const { return nodes_.size(); }
  bool empty() const { return nodes_.empty(); }

 private:
  void visit(Tensor* t);

  std::vector<Tensor*> nodes_;
  std::vector<Tensor*> leafs_;
  std::vector<Tensor*> outputs_;
  std::unordered_set<const Tensor*> visited_;
};

}  // namespace tg
