#pragma once
// What every leaf node of an epilogue graph declares, and what it is built from.
//
// A node type N provides
//   struct N::Arguments;               host-side parameters (pointers, strides, scalars)
//   N(const Arguments&, const NodeContext&);   validates them (throws tg::Error)
//   using ElementOutput;               the element type on its outgoing edges
//   static constexpr NodeRole kRole;  and kArity (inputs)
// and, by role:
//   kLoad    static constexpr Extent kExtent;
//            template <int W> void load(const SubTile&, Lane* out) const;          LOAD phase
//   kCompute using ElementInput;  template <Extent... In> static constexpr Extent extent;
//            template <int W, class... V> Vec<Lane, W> compute(V... inputs) const; COMPUTE phase
//   kReduce  using ElementInput;  template <int W, Extent In>
//            void reduce(const SubTile&, const Lane* in, float* scratch);         COMPUTE phase
//            void finish(const Launcher&);   folds the per-block partials, writes the result
//   kStore   using ElementInput;  template <int W, Extent In>
//            void store(const SubTile&, const Lane* in) const;                  STORE phase
// Reduce and store nodes pass their input through: consumers see the value they consumed
// (Catlass's convention), so a graph can store a value and keep using it.
#include <cstdint>
#include <string>

#include "tilegraph/core/error.h"
#include "tilegraph/evg/block.h"

namespace tg::evg {

enum class NodeRole { kLoad, kCompute, kReduce, kStore };

// When a node's output is ready: the seed's three phases.
enum class Stage { kLoad, kCompute, kStore };

constexpr Stage stage_of(NodeRole role) {
  switch (role) {
    case NodeRole::kLoad: return Stage::kLoad;
    case NodeRole::kCompute: return Stage::kCompute;
    case NodeRole::kReduce: return Stage::kCompute;
    case NodeRole::kStore: return Stage::kStore;
  }
  return Stage::kCompute;
}

// What a node is constructed with besides its Arguments.
struct NodeContext {
  GemmShape problem;
  BlockGrid grid;
  int index = 0;  // position in the flattened graph, for messages
};

// "evg node 3 (VisitorAuxLoad): <what>" as a tg::Error.
[[noreturn]] inline void node_error(const NodeContext& ctx, const char* node, const std::string& what) {
  throw Error("evg node " + std::to_string(ctx.index) + " (" + node + "): " + what);
}

}  // namespace tg::evg
