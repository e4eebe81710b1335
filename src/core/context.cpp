#include "tilegraph/core/context.h"

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <limits>
#include <string>

#include "tilegraph/core/error.h"

namespace tg {

void* aligned_alloc_bytes(size_t bytes, size_t alignment) {
  if (bytes > std::numeric_limits<size_t>::max() - alignment) {
    throw Error("out of memory allocating " + std::to_string(bytes) + " bytes");
  }
  // aligned_alloc needs a size that is a multiple of the alignment, and a non-zero one.
  const size_t rounded = std::max(alignment, (bytes + alignment - 1) / alignment * alignment);
  void* p = std::aligned_alloc(alignment, rounded);
  if (!p) throw Error("out of memory allocating " + std::to_string(bytes) + " bytes");
  return p;
}

void aligned_free_bytes(void* p) { std::free(p); }

void Context::AlignedFree::operator()(void* p) const { aligned_free_bytes(p); }

Context::Context(ContextOptions options) : options_(options) {}
Context::~Context() = default;

Tensor& Context::add_tensor() {
  constexpr size_t kFirstChunk = 8, kLargestChunk = 256;
  if (tensor_chunks_.empty() || tensor_chunks_.back().used == tensor_chunks_.back().size) {
    const size_t size = tensor_chunks_.empty() ? kFirstChunk : std::min(2 * tensor_chunks_.back().size, kLargestChunk);
    tensor_chunks_.push_back({std::make_unique<Tensor[]>(size), size, 0});
  }
  ++tensor_count_;
  TensorChunk& chunk = tensor_chunks_.back();
  return chunk.tensors[chunk.used++];
}

Tensor* Context::new_tensor(DType type, std::span<const int64_t> ne) {
  if (ne.empty() || ne.size() > size_t(kMaxDims)) {
    throw Error("new_tensor: " + std::to_string(ne.size()) + " dimensions (expected 1 to 4)");
  }
  for (size_t i = 0; i < ne.size(); ++i) {
    if (ne[i] < 0) {
      throw Error("new_tensor: negative size " + std::to_string(ne[i]) + " in dimension " + std::to_string(i));
    }
  }
  const DTypeTraits& traits = dtype_traits(type);
  size_t row_bytes = 0;
  try {
    row_bytes = row_size(type, ne[0]);
  } catch (const Error& e) {
    throw Error(std::string("new_tensor: ") + e.what());
  }
  // Strides and the total size must fit in a ptrdiff_t, or pointer arithmetic over the tensor
  // would wrap.
  size_t nb[kMaxDims] = {traits.type_size, row_bytes, 0, 0};
  size_t total = row_bytes;
  for (int i = 1; i < kMaxDims; ++i) {
    const size_t n = i < int(ne.size()) ? size_t(ne[size_t(i)]) : 1;
    if (__builtin_mul_overflow(total, n, &total) || total > size_t(std::numeric_limits<ptrdiff_t>::max())) {
      throw Error("new_tensor: " + std::string(traits.name) + " tensor of shape " + shape_string(ne) +
                  " is larger than the address space");
    }
    if (i + 1 < kMaxDims) nb[i + 1] = total;
  }
  Tensor& t = add_tensor();
  t.type = type;
  for (size_t i = 0; i < ne.size(); ++i) t.ne[i] = ne[i];
  std::copy_n(nb, kMaxDims, t.nb);
  if (!options_.no_alloc) allocate(&t);
  return &t;
}

Tensor* Context::new_view(Tensor* base, DType type, std::span<const int64_t> ne, std::span<const size_t> nb,
                          size_t offset) {
  Tensor& t = add_tensor();
  t.type = type;
  for (size_t i = 0; i < ne.size(); ++i) t.ne[i] = ne[i];
  for (size_t i = 0; i < nb.size(); ++i) t.nb[i] = nb[i];
  // A view of a view aliases the underlying storage directly, as in ggml.
  Tensor* storage = base->view_src ? base->view_src : base;
  t.view_src = storage;
  t.view_offs = offset + (base->view_src ? base->view_offs : 0);
  if (storage->data) t.data = static_cast<char*>(storage->data) + t.view_offs;
  return &t;
}

void Context::allocate(Tensor* t) {
  const size_t bytes = t->nbytes();
  blocks_.emplace_back(aligned_alloc_bytes(bytes));
  t->data = blocks_.back().get();
  allocated_bytes_ += bytes;
}

void Context::allocate_all() {
  for_each_tensor([&](Tensor& t) {
    if (!t.view_src && !t.data) allocate(&t);
  });
  for_each_tensor([](Tensor& t) {
    if (t.view_src && !t.data && t.view_src->data) t.data = static_cast<char*>(t.view_src->data) + t.view_offs;
  });
}

}  // namespace tg
