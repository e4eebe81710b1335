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
  output->flags |= kFlagOutput;
  outputs_.push_back(output);
  visit(output);
}

// Post-order depth-first walk over sources, iterative so that very deep graphs (long chains of
// thousands of nodes) cannot overflow the stack.
void Graph::visit(Tensor* root) {
  if (visited_.contains(root)) return;
  std::vector<std::pair<Tensor*, int>> stack{{root, 0}};
  visited_.insert(root);
  while (!stack.empty()) {
    auto& [tensor, next_src] = stack.back();
    if (next_src < kMaxSrc) {
      Tensor* src = tensor->src[next_src++];
      if (src && visited_.insert(src).second) stack.emplace_back(src, 0);
      continue;
    }
    if (tensor->op == Op::NONE) {
      leafs_.push_back(tensor);
    } else {
      nodes_.push_back(tensor);
    }
    stack.pop_back();
  }
}

}  // namespace tg
