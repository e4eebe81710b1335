#pragma once
// A Context owns tensors (and, unless no_alloc, their memory). Build weights in an allocating
// context; build per-step compute graphs in a no_alloc context and let the graph allocator place
// the intermediates. Tensor pointers stay valid for the context's lifetime.
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <vector>

#include "tilegraph/core/tensor.h"

namespace tg {

inline constexpr size_t kTensorAlignment = 64;

struct ContextOptions {
  bool no_alloc = false;  // tensors get data == nullptr; the graph allocator or caller sets it
};

class Context {
 public:
  explicit Context(ContextOptions options = {});
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
  ~Context();

  // A new contiguous tensor with 1..4 dimensions (missing trailing dims are 1). Sizes must be
  // >= 0 and ne[0] a multiple of the block size for quantized types; otherwise tg::Error.
  Tensor* new_tensor(DType type, std::span<const int64_t> ne);
  Tensor* new_tensor(DType type, std::initializer_list<int64_t> ne) {
    return new_tensor(type, std::span<const int64_t>(ne.begin(), ne.size()));
  }
  // A tensor header with no data and the given shape, used by view builders.
  Tensor* new_view(Tensor* base, DType type, std::span<const int64_t> ne, std::span<const size_t> nb, size_t offset);

  bool no_alloc() const { return options_.no_alloc; }
  size_t tensor_count() const { return tensor_count_; }
  size_t allocated_bytes() const { return allocated_bytes_; }
  // Gives memory to every non-view tensor of this context that has none.
  void allocate_all();

 private:
  void allocate(Tensor* t);
  // A default tensor in the next free slot.
  Tensor& add_tensor();
  // fn(Tensor&) for every tensor, in creation order.
  template <class Fn>
  void for_each_tensor(Fn&& fn) {
    for (TensorChunk& chunk : tensor_chunks_) {
      for (size_t i = 0; i < chunk.used; ++i) fn(chunk.tensors[i]);
    }
  }

  ContextOptions options_;
  // Tensors live in chunks of growing size, so consecutive tensors sit next to each other (a
  // std::deque allocates each 320-byte Tensor on its own, between the data blocks): graph-mode
  // lookup walks a graph's nodes in order and reads 3 of every 5 cache lines instead of 3 of 10.
  struct TensorChunk {
    std::unique_ptr<Tensor[]> tensors;
    size_t size;
    size_t used;
  };
  std::vector<TensorChunk> tensor_chunks_;
  size_t tensor_count_ = 0;
  struct AlignedFree {
    void operator()(void* p) const;
  };
  std::vector<std::unique_ptr<void, AlignedFree>> blocks_;
  size_t allocated_bytes_ = 0;
};

// Aligned host memory shared by contexts, buffers and kernels.
void* aligned_alloc_bytes(size_t bytes, size_t alignment = kTensorAlignment);
void aligned_free_bytes(void* p);

}  // namespace tg
