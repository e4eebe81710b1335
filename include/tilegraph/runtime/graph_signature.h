#pragma once
// The properties of a graph that decide whether a captured graph can be replayed for it (seed
// 000 §6.1/§7.2, seed 003's ggml_graph_node_properties), stored compactly:
//   structure  - per node: op, type, ne, nb, op_params, view offset, and where each source comes
//                from (a node or leaf index, see Graph::src_refs); per leaf: type, ne, nb.
//   addresses  - data pointers of every node that owns memory and of every leaf. Views, no-op
//                nodes and in-place writes (SET_ROWS, CPY) are exempt: their addresses follow
//                from their base's address and their view offset, which the structure holds.
// Sources' addresses, shapes and strides are covered through the node or leaf they refer to.
// key() hashes a cheap subset to find candidates in O(1); matches() then verifies exactly.
#include <cstdint>
#include <vector>

#include "tilegraph/core/graph.h"

namespace tg {

enum class SignatureMatch {
  kDifferent,       // structure differs: another graph
  kAddressesOnly,   // same structure, some data addresses moved: re-bind the captured graph
  kExact,           // replay as captured
};

// What a lookup hashes in one pass over the graph.
struct GraphKey {
  uint64_t structure = 0;  // node count and each node's op, type and shape: equal for graphs that can match
  uint64_t addresses = 0;  // the address list: among same-structure entries, which one is likely exact
};

class GraphSignature {
 public:
  static GraphKey key(const Graph& graph);

  void record(const Graph& graph);
  SignatureMatch matches(const Graph& graph) const;
  const GraphKey& recorded_key() const { return key_; }
  size_t node_count() const { return node_count_; }
  size_t bytes() const {
    return structure_.size() * sizeof(uint64_t) + addresses_.size() * sizeof(const void*);
  }

 private:
  GraphKey key_;
  size_t node_count_ = 0;
  std::vector<uint64_t> structure_;
  std::vector<const void*> addresses_;
};

}  // namespace tg
