#include "tilegraph/runtime/graph_allocator.h"

#include <algorithm>
#include <limits>
#include <string>

#include "tilegraph/core/context.h"
#include "tilegraph/core/error.h"
#include "tilegraph/core/tensor_map.h"

namespace tg {

namespace {

size_t align_up(size_t n) { return (n + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment; }

// Contexts make every view alias the underlying storage directly, but a hand-built chain of views
// must still end at the tensor that owns the bytes.
Tensor* storage_of(Tensor* t) {
  while (t->view_src) t = t->view_src;
  return t;
}

// Best-fit allocation over one growing address range. Free blocks are kept sorted by offset and
// merged with their neighbours on release, so fragmentation does not accumulate across a graph.
class FreeList {
 public:
  size_t alloc(size_t size) {
    auto best = free_.end();
    for (auto it = free_.begin(); it != free_.end(); ++it) {
      if (it->size >= size && (best == free_.end() || it->size < best->size)) best = it;
    }
    if (best != free_.end()) {
      const size_t offset = best->offset;
      best->offset += size;
      best->size -= size;
      if (best->size == 0) free_.erase(best);
      return offset;
    }
    // Nothing fits: a free block at the top of the range only needs to grow, which keeps the
    // peak lower than starting a fresh block above it.
    size_t offset = end_;
    if (!free_.empty() && free_.back().offset + free_.back().size == end_) {
      offset = free_.back().offset;
      free_.pop_back();
    }
    if (size > std::numeric_limits<size_t>::max() - offset) {
      throw Error("graph allocator: the graph's tensors need more memory than the address space");
    }
    end_ = offset + size;
    peak_ = std::max(peak_, end_);
    return offset;
  }

  void release(size_t offset, size_t size) {
    auto next =
        std::lower_bound(free_.begin(), free_.end(), offset, [](const Block& b, size_t off) { return b.offset < off; });
    auto it = free_.insert(next, Block{offset, size});
    if (it + 1 != free_.end() && it->offset + it->size == (it + 1)->offset) {
      it->size += (it + 1)->size;
      free_.erase(it + 1);
    }
    if (it != free_.begin() && (it - 1)->offset + (it - 1)->size == it->offset) {
      (it - 1)->size += it->size;
      free_.erase(it);
    }
  }

  size_t peak() const { return peak_; }
  void reset() {
    free_.clear();
    end_ = peak_ = 0;
  }

 private:
  struct Block {
    size_t offset;
    size_t size;
  };
  std::vector<Block> free_;
  size_t end_ = 0;
  size_t peak_ = 0;
};

struct StorageState {
  int last_use = -1;    // index of the last node touching this storage through any tensor
  bool pinned = false;  // an input or output lives here: never handed to another tensor
  bool placed = false;
  size_t offset = 0;
  size_t size = 0;
  Tensor* base = nullptr;
  int32_t next_released = -1;  // the next storage released after the same node
};

}  // namespace

// The planner's working memory, kept between the steps of a decode loop so that planning a
// graph of the same size allocates nothing. Tensors are addressed by graph position (nodes, then
// leafs) and sources through Graph::sources, so only views need a lookup by pointer.
struct GraphAllocator::Workspace {
  std::vector<StorageState> storage;
  std::vector<int32_t> storage_at;     // per graph position: its storage in `storage`
  TensorMap outside;                   // view bases that are not in the graph -> storage
  std::vector<int32_t> released_head;  // per node: first storage whose last use it is
  FreeList free_list;

  void plan(const Graph& graph, AllocationPlan& result) {
    const std::vector<Tensor*>& nodes = graph.nodes();
    const std::vector<Tensor*>& leafs = graph.leafs();
    const size_t n_nodes = nodes.size(), n_positions = n_nodes + leafs.size();
    auto tensor_at = [&](size_t p) { return p < n_nodes ? nodes[p] : leafs[p - n_nodes]; };
    auto position = [&](SourceRef ref) { return ref >= 0 ? size_t(ref) : n_nodes + size_t(-1 - ref); };
    storage.clear();
    outside.clear();
    free_list.reset();
    result.placements.clear();
    result.peak_bytes = result.unshared_bytes = 0;

    // One storage per tensor that owns its bytes; views share their base's.
    storage_at.resize(n_positions);
    for (size_t p = 0; p < n_positions; ++p) {
      Tensor* t = tensor_at(p);
      if (t->view_src) continue;
      storage_at[p] = int32_t(storage.size());
      storage.push_back(StorageState{.base = t});
    }
    for (size_t p = 0; p < n_positions; ++p) {
      Tensor* t = tensor_at(p);
      if (!t->view_src) continue;
      Tensor* base = storage_of(t);
      const SourceRef ref = graph.ref_of(base);
      if (ref != kNoSource) {
        storage_at[p] = storage_at[position(ref)];
        continue;
      }
      auto [slot, inserted] = outside.try_emplace(base, int32_t(storage.size()));
      if (inserted) storage.push_back(StorageState{.base = base});
      storage_at[p] = *slot;
    }

    auto note = [&](size_t p, int use) {
      StorageState& s = storage[size_t(storage_at[p])];
      s.last_use = std::max(s.last_use, use);
      if (tensor_at(p)->flags & (kFlagInput | kFlagOutput)) s.pinned = true;
    };
    for (size_t l = 0; l < leafs.size(); ++l) note(n_nodes + l, -1);
    for (size_t i = 0; i < n_nodes; ++i) {
      note(i, int(i));
      for (SourceRef ref : graph.sources(i)) {
        if (ref != kNoSource) note(position(ref), int(i));
      }
    }

    auto place = [&](size_t p) {
      StorageState& s = storage[size_t(storage_at[p])];
      if (s.placed || s.base->data) return;
      // Empty tensors still get a block of their own so that their data pointer is valid and
      // distinct, as an allocating context gives them.
      s.size = align_up(std::max<size_t>(s.base->nbytes(), 1));
      s.offset = free_list.alloc(s.size);
      s.placed = true;
      result.placements.push_back({s.base, s.offset, s.size});
      result.unshared_bytes += s.size;
    };

    for (size_t l = 0; l < leafs.size(); ++l) place(n_nodes + l);

    released_head.assign(n_nodes, -1);
    for (size_t k = 0; k < storage.size(); ++k) {
      StorageState& s = storage[k];
      if (s.pinned || s.last_use < 0) continue;
      s.next_released = released_head[size_t(s.last_use)];
      released_head[size_t(s.last_use)] = int32_t(k);
    }
    for (size_t i = 0; i < n_nodes; ++i) {
      place(i);
      for (SourceRef ref : graph.sources(i)) {
        if (ref != kNoSource) place(position(ref));
      }
      for (int32_t k = released_head[i]; k >= 0; k = storage[size_t(k)].next_released) {
        const StorageState& s = storage[size_t(k)];
        if (s.placed) free_list.release(s.offset, s.size);
      }
    }
    result.peak_bytes = free_list.peak();
  }
};

GraphAllocator::GraphAllocator() : workspace_(std::make_unique<Workspace>()) {}
GraphAllocator::~GraphAllocator() = default;
GraphAllocator::GraphAllocator(GraphAllocator&&) noexcept = default;
GraphAllocator& GraphAllocator::operator=(GraphAllocator&&) noexcept = default;

AllocationPlan GraphAllocator::plan(const Graph& graph) {
  Workspace workspace;
  AllocationPlan result;
  workspace.plan(graph, result);
  return result;
}

const AllocationPlan& GraphAllocator::allocate(const Graph& graph, Backend& backend) {
  // Tensors placed by an earlier call are planned again rather than taken for caller-provided
  // memory: their old offsets may belong to someone else in this plan, and their old buffer
  // may be gone (one that grew was released). Views follow their base.
  auto forget = [](Tensor* t) {
    Tensor* base = storage_of(t);
    if (base->data && (base->flags & kFlagPlaced)) base->data = nullptr;
  };
  for (Tensor* t : graph.leafs()) forget(t);
  for (Tensor* t : graph.nodes()) forget(t);

  workspace_->plan(graph, last_plan_);
  if (last_plan_.peak_bytes > buffer_size()) {
    buffer_.reset();  // release first so the old and the new buffer are never held together
    buffer_ = backend.alloc_buffer(last_plan_.peak_bytes);
    if (!buffer_ || buffer_->size() < last_plan_.peak_bytes) {
      throw Error(std::string(backend.name()) + ": graph allocator: buffer of " +
                  std::to_string(last_plan_.peak_bytes) + " bytes not available");
    }
  }
  char* base = buffer_ ? static_cast<char*>(buffer_->base()) : nullptr;
  for (const TensorPlacement& p : last_plan_.placements) {
    p.tensor->data = base + p.offset;
    p.tensor->flags |= kFlagPlaced;
  }
  resolve_view_data(graph);
  return last_plan_;
}

void resolve_view_data(const Graph& graph) {
  // Offsets add up along a hand-built chain of views (a Context makes views of views alias the
  // storage directly), so a view never depends on its base having been resolved first.
  auto resolve = [](Tensor* t) {
    if (!t->view_src) return;
    size_t offset = 0;
    const Tensor* storage = t;
    for (; storage->view_src; storage = storage->view_src) offset += storage->view_offs;
    t->data = storage->data ? static_cast<char*>(storage->data) + offset : nullptr;
  };
  for (Tensor* t : graph.leafs()) resolve(t);
  for (Tensor* t : graph.nodes()) resolve(t);
}

}  // namespace tg
