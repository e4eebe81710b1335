#pragma once
// Plans the memory of a graph's intermediate tensors by lifetime (ggml-alloc's role): a tensor's
// memory is free again once the last node reading it has run, and later tensors reuse it. Views
// take their base's memory; tensors that already have data (weights, caller-provided inputs) are
// left alone; outputs (kFlagOutput) and inputs (kFlagInput) are never reused.
#include <cstddef>
#include <memory>
#include <vector>

#include "tilegraph/core/graph.h"
#include "tilegraph/runtime/backend.h"

namespace tg {

struct TensorPlacement {
  Tensor* tensor;
  size_t offset;  // bytes from the buffer base, kTensorAlignment-aligned
  size_t size;    // bytes reserved
};

struct AllocationPlan {
  std::vector<TensorPlacement> placements;  // one per tensor that needs memory, in graph order
  size_t peak_bytes = 0;                    // buffer size the plan needs
  size_t unshared_bytes = 0;                // what the same tensors would take with no reuse
};

class GraphAllocator {
 public:
  GraphAllocator();
  ~GraphAllocator();
  GraphAllocator(GraphAllocator&&) noexcept;
  GraphAllocator& operator=(GraphAllocator&&) noexcept;

  // Computes offsets for every tensor of `graph` that needs memory: non-view tensors with
  // data == nullptr (leafs included, e.g. inputs built in a no_alloc context).
  static AllocationPlan plan(const Graph& graph);

  // Plans, grows the owned buffer (from `backend`) if the plan needs more, and sets the data of
  // every planned tensor (marking it kFlagPlaced) and of every view over one. The buffer is
  // reused across calls, so pointers from an earlier call are invalidated; tensors a
  // GraphAllocator placed before (kFlagPlaced: the same graph allocated again, even after the
  // buffer grew for another graph) are planned again rather than taken for caller-provided
  // memory.
  const AllocationPlan& allocate(const Graph& graph, Backend& backend);

  size_t buffer_size() const { return buffer_ ? buffer_->size() : 0; }

 private:
  struct Workspace;
  std::unique_ptr<Workspace> workspace_;
  std::unique_ptr<Buffer> buffer_;
  AllocationPlan last_plan_;
};

// Gives every view in `graph` the data pointer of its base plus its offset (bases first).
void resolve_view_data(const Graph& graph);

}  // namespace tg
