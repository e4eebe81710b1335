#include "evg/allocation_counter.h"

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>

namespace tg::evg::test {
namespace {

std::atomic<bool> counting{false};
std::atomic<int64_t> allocations{0};

void* allocate(std::size_t bytes, std::size_t alignment) {
  if (counting.load(std::memory_order_relaxed)) allocations.fetch_add(1, std::memory_order_relaxed);
  const std::size_t size = (bytes ? bytes : 1);
  void* p = alignment <= alignof(std::max_align_t)
                ? std::malloc(size)
                : std::aligned_alloc(alignment, (size + alignment - 1) / alignment * alignment);
  if (!p) throw std::bad_alloc();
  return p;
}

}  // namespace

CountAllocations::CountAllocations() {
  allocations = 0;
  counting = true;
}
CountAllocations::~CountAllocations() { counting = false; }
int64_t CountAllocations::count() const { return allocations.load(); }

}  // namespace tg::evg::test

void* operator new(std::size_t bytes) { return tg::evg::test::allocate(bytes, alignof(std::max_align_t)); }
void* operator new[](std::size_t bytes) { return tg::evg::test::allocate(bytes, alignof(std::max_align_t)); }
void* operator new(std::size_t bytes, std::align_val_t a) { return tg::evg::test::allocate(bytes, std::size_t(a)); }
void* operator new[](std::size_t bytes, std::align_val_t a) { return tg::evg::test::allocate(bytes, std::size_t(a)); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
