#pragma once
// The properties of a graph that decide whether a captured graph can be replayed for it (the
// ACL graph's and ggml-cuda's ggml_graph_node_properties), stored compactly:
//   per node   op, type, ne, nb, op_params, view offset, whether it is a view, and where each
//              source comes from (a node or leaf index, see Graph::sources); per leaf: type, ne, nb;
//              per node and leaf: whether it is a graph input or output (kFlagInput, kFlagOutput),
//              which a backend's capture may depend on.
//   addresses  data pointers of every node that owns memory and of every leaf. Views (in-place
//              writes such as SET_ROWS and CPY among them) are exempt: their addresses follow
//              from their base's address and their view offset, which are recorded.
// Sources' addresses, shapes and strides are covered through the node or leaf they refer to.
// key() hashes a cheap subset to find candidates in O(1); matches() then verifies exactly.
#include <cstdint>
#include <vector>

#include "tilegraph/core/graph.h"

namespace tg {

enum class SignatureMatch {
  kDifferent,      // structure differs: another graph
  kAddressesOnly,  // same structure, some data addresses moved: re-bind the captured graph
  kExact,          // replay as captured
};

// What a lookup hashes in one pass over the graph.
struct GraphKey {
  uint64_t structure = 0;  // node count and each node's op, type and shape: equal for graphs that can match
  uint64_t addresses = 0;  // the address list: among same-structure entries, which one is likely exact

  bool operator==(const GraphKey&) const = default;
};

// Which code runs the verification. kBest: AVX-512 where the CPU has it (F, VL, BW and DQ),
// else the portable code; tests run both on the same records.
enum class SignatureIsa { kBest, kPortable, kAvx512 };

class GraphSignature {
 public:
  static bool supports(SignatureIsa isa);

  // `address_sum`, if given, receives the raw sum behind GraphKey::addresses.
  static GraphKey key(const Graph& graph, uint64_t* address_sum = nullptr);

  void record(const Graph& graph);
  // Exact verification. Unless the result is kDifferent, `key` (if given) receives the graph's
  // key, found in the same pass: the structure is this signature's, and the address hash is the
  // recorded one updated for the addresses that differ — so a graph that only moved needs no
  // key() pass of its own.
  // Throws tg::Error if the CPU cannot run `isa`.
  SignatureMatch matches(const Graph& graph, GraphKey* key = nullptr, SignatureIsa isa = SignatureIsa::kBest) const;
  const GraphKey& recorded_key() const { return key_; }
  size_t node_count() const { return node_count_; }
  size_t bytes() const { return words_.size() * sizeof(uint64_t); }

 private:
  GraphKey key_;
  uint64_t address_sum_ = 0;
  size_t node_count_ = 0;
  size_t leaf_count_ = 0;
  // Per leaf and then per node, each from the last, a variable-length record (see
  // src/runtime/signature_records.h), then padding that lets the verification read a fixed
  // number of words past a record's end.
  std::vector<uint64_t> words_;
};

}  // namespace tg
