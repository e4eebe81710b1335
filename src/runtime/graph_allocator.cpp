#include "tilegraph/runtime/graph_allocator.h"

#include <algorithm>
#include <string>
#include <unordered_map>

#include "tilegraph/core/context.h"
#include "tilegraph/core/error.h"

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
    end_ = offset + size;
    peak_ = std::max(peak_, end_);
    return offset;
  }

  void release(size_t offset, size_t size) {
    auto next = std::lower_bound(free_.begin(), free_.end(), offset,
                                 [](const Block& b, size_t off) { return b.offset < off; });
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
};

}  // namespace

AllocationPlan GraphAllocator::plan(const Graph& graph) {
  const std::vector<Tensor*>& nodes = graph.nodes();
  std::unordered_map<Tensor*, StorageState> storage;

  auto note = [&](Tensor* t, int use) {
    StorageState& s = storage[storage_of(t)];
    s.last_use = std::max(s.last_use, use);
    if (t->flags & (kFlagInput | kFlagOutput)) s.pinned = true;
  };
  for (Tensor* leaf : graph.leafs()) note(leaf, -1);
  for (int i = 0; i < int(nodes.size()); ++i) {
    note(nodes[i], i);
    for (Tensor* src : nodes[i]->src) {
      if (src) note(src, i);
    }
  }

  AllocationPlan result;
  FreeList free_list;
  auto place = [&](Tensor* t) {
    Tensor* base = storage_of(t);
    if (base->data) return;
    StorageState& s = storage[base];
    if (s.placed) return;
    // Empty tensors still get a block of their own so that their data pointer is valid and
    // distinct, as an allocating context gives them.
    s.size = align_up(std::max<size_t>(base->nbytes(), 1));
    s.offset = free_list.alloc(s.size);
    s.placed = true;
    result.placements.push_back({base, s.offset, s.size});
    result.unshared_bytes += s.size;
  };

  for (Tensor* leaf : graph.leafs()) place(leaf);

  std::vector<std::vector<Tensor*>> released_after(nodes.size());
  for (auto& [base, s] : storage) {
    if (!s.pinned && s.last_use >= 0) released_after[s.last_use].push_back(base);
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    place(nodes[i]);
    for (Tensor* src : nodes[i]->src) {
      if (src) place(src);
    }
    for (Tensor* base : released_after[i]) {
      const StorageState& s = storage[base];
      if (s.placed) free_list.release(s.offset, s.size);
    }
  }
  result.peak_bytes = free_list.peak();
  return result;
}

const AllocationPlan& GraphAllocator::allocate(const Graph& graph, Backend& backend) {
  // Tensors placed in our buffer by an earlier call are planned again rather than taken for
  // caller-provided memory; their old offsets may belong to someone else in this plan.
  if (buffer_) {
    const char* lo = static_cast<const char*>(buffer_->base());
    const char* hi = lo + buffer_->size();
    auto forget = [&](Tensor* t) {
      const char* p = static_cast<const char*>(t->data);
      if (p && p >= lo && p < hi) t->data = nullptr;
    };
    for (Tensor* t : graph.leafs()) forget(t);
    for (Tensor* t : graph.nodes()) forget(t);
  }

  last_plan_ = plan(graph);
  if (last_plan_.peak_bytes > buffer_size()) {
    buffer_.reset();  // release first so the old and the new buffer are never held together
    buffer_ = backend.alloc_buffer(last_plan_.peak_bytes);
    if (!buffer_ || buffer_->size() < last_plan_.peak_bytes) {
      throw Error(std::string(backend.name()) + ": graph allocator: buffer of " +
                  std::to_string(last_plan_.peak_bytes) + " bytes not available");
    }
  }
  char* base = buffer_ ? static_cast<char*>(buffer_->base()) : nullptr;
  for (const TensorPlacement& p : last_plan_.placements) p.tensor->data = base + p.offset;
  resolve_view_data(graph);
  return last_plan_;
}

void resolve_view_data(const Graph& graph) {
  auto resolve = [](Tensor* t) {
    if (!t->view_src) return;
    t->data = t->view_src->data ? static_cast<char*>(t->view_src->data) + t->view_offs : nullptr;
  };
  for (Tensor* t : graph.leafs()) resolve(t);
  for (Tensor* t : graph.nodes()) resolve(t);
}

}  // namespace tg
