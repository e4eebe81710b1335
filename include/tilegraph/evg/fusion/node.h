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
//            template <int W> Vec<Lane, W> load_vector(const SubTile&, int r, int i) const;
//              (optional, tile extent) lanes [i, i + W) of row r read straight from memory, so
//              that a fused compute loop needs no LOAD-phase copy of the value
//   kCompute using ElementInput;  template <Extent... In> static constexpr Extent extent;
//            template <int W, class... V> Vec<Lane, W> compute(V... inputs) const; COMPUTE phase
//   kReduce  using ElementInput;  template <int W, Extent In>
//            void reduce(const SubTile&, const Lane* in, float* scratch);         COMPUTE phase
//            void finish(const Launcher&);   folds the per-block partials, writes the result
//   kStore   using ElementInput;  template <int W, Extent In>
//            void store(const SubTile&, const Lane* in) const;                  STORE phase
// Reduce and store nodes pass their input through: consumers see the value they consumed
// (Catlass's convention), so a graph can store a value and keep using it.
//
// Load, reduce and store nodes also report the caller's memory they read or write:
//   Footprint footprint() const;       empty for none (the accumulator, a scalar)
// and a store node may offer its output to the GEMM to sum blocks in (block.h):
//   float* in_place_output(int64_t& ld) const;   element (0, 0), row stride ld; or nullptr
// The executor grants that only to an output no other node's footprint overlaps.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "tilegraph/core/error.h"
#include "tilegraph/evg/block.h"

namespace tg::evg {

// What a node does, which fixes the Catlass EVG phase it runs in: loads in LOAD, computes and
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

// The bytes [lo, hi) a node may touch; empty when lo == hi. Compared as addresses, never
// dereferenced.
struct Footprint {
  uintptr_t lo = 0, hi = 0;

  bool empty() const { return lo == hi; }
  bool overlaps(const Footprint& other) const { return !empty() && !other.empty() && lo < other.hi && other.lo < hi; }
};

// The footprint of element (r, c) at ptr[r * row_stride + c * col_stride] over r < rows,
// c < cols, for elements of `element_bytes` (a vector is one row or one column of it).
inline Footprint strided_footprint(const void* ptr, size_t element_bytes, int64_t rows, int64_t cols,
                                   int64_t row_stride, int64_t col_stride) {
  if (!ptr || rows <= 0 || cols <= 0) return {};
  const int64_t row_span = (rows - 1) * row_stride, col_span = (cols - 1) * col_stride;
  const int64_t first = std::min<int64_t>(row_span, 0) + std::min<int64_t>(col_span, 0);
  const int64_t last = std::max<int64_t>(row_span, 0) + std::max<int64_t>(col_span, 0);
  const auto base = reinterpret_cast<uintptr_t>(ptr);
  const auto bytes = int64_t(element_bytes);
  return {base + uintptr_t(first * bytes), base + uintptr_t((last + 1) * bytes)};
}

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
