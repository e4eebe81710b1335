#pragma once
// How the tx8 backend cuts a graph: into runs of consecutive nodes that all go to the chip or all
// to the CPU, each run made a graph of its own (its nodes cloned, with the views they read
// through, and what it reads from outside as leaves) that the compiler or the CPU backend takes.
#include <cstdint>
#include <functional>
#include <memory>
#include <unordered_map>
#include <vector>

#include "tilegraph/core/context.h"
#include "tilegraph/core/graph.h"

namespace tg::tx8 {

struct Run {
  bool chip = false;
  std::vector<size_t> nodes;  // indices into graph.nodes(), executable nodes only (no views)
};

// The executable nodes of `graph` in order, cut where on_chip changes.
std::vector<Run> split_runs(const Graph& graph, const std::function<bool(const Tensor&)>& on_chip);

// Per node of `graph`, the index of the last executable node reading it (through views), or
// INT64_MAX for the graph's outputs; -1 if nothing reads it.
std::vector<int64_t> last_readers(const Graph& graph);

// The tensor whose memory `t` is (a view's storage).
inline const Tensor* storage_of(const Tensor* t) { return t->view_src ? t->view_src : t; }

struct RunGraph {
  std::unique_ptr<Context> ctx;  // the clones (no_alloc: data as the originals' until changed)
  Graph graph;                   // outputs: the run's nodes read after it, then its in-place writes
  std::unordered_map<const Tensor*, const Tensor*> original;  // clone -> the graph's tensor
  std::vector<const Tensor*> written;                         // originals of the outputs, in graph order of the run
};

// The graph of `run`. Its nodes keep their sources among themselves; a source computed
// elsewhere or a leaf becomes a leaf with the original's type, shape, strides, name, data and
// kFlagParam / kFlagInput flags; views are cloned so that each starts from what it reads.
RunGraph extract_run(const Graph& graph, const Run& run, const std::vector<int64_t>& last_reader);

}  // namespace tg::tx8
