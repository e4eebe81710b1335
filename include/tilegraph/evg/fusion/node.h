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
#include <cstddef>
#include <cstdint>
#include <string>

#include "tilegraph/core/error.h"
#include "tilegraph/evg/block.h"

namespace tg::evg {

// What a node does, which fixes the seed's phase it runs in: loads in LOAD, computes and
// reductions in COMPUTE, stores in STORE.
enum class NodeRole { kLoad, kCompute, kReduce, kStore };

// What a node is constructed with besides its Arguments.
struct NodeContext {
  GemmShape problem;
  BlockGrid grid;
  int index = 0;  // position in the flattened graph, for messages
  // A node type that declares `static size_t workspace_bytes(const GemmShape&, const BlockGrid&)`
  // (the reductions' partials) gets that many bytes of memory here, 64-byte aligned, for the
  // duration of the run: carved from the caller's workspace, so a steady run allocates nothing.
  std::byte* workspace = nullptr;
};

// Bytes of run-long memory node type Op asks for (0 unless it declares workspace_bytes), rounded
// up to whole 64-byte lines so that the next node's share stays aligned.
template <class Op>
constexpr size_t node_workspace_bytes(const GemmShape& problem, const BlockGrid& grid) {
  if constexpr (requires { Op::workspace_bytes(problem, grid); }) {
    return (Op::workspace_bytes(problem, grid) + 63) / 64 * 64;
  } else {
    return 0;
  }
}

// "evg node 3 (VisitorAuxLoad): <what>" as a tg::Error.
[[noreturn]] inline void node_error(const NodeContext& ctx, const char* node, const std::string& what) {
  throw Error("evg node " + std::to_string(ctx.index) + " (" + node + "): " + what);
}

}  // namespace tg::evg
