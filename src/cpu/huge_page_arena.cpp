#include "huge_page_arena.h"

#include <sys/mman.h>

#include <algorithm>

namespace tg::cpu {

namespace {

constexpr size_t kHugePage = size_t(2) << 20;

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

}  // namespace

// A 2 MiB-aligned anonymous mapping advised into 2 MiB pages (base null if none was granted).
struct HugePageArena::Segment {
  explicit Segment(size_t size) : bytes(size) {
    // mmap aligns to 4 KiB only: map 2 MiB more and trim both ends to the aligned part.
    const size_t reserved = bytes + kHugePage;
    void* at = mmap(nullptr, reserved, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (at == MAP_FAILED) return;
    const auto start = reinterpret_cast<uintptr_t>(at);
    const uintptr_t aligned = round_up(start, kHugePage);
    if (aligned > start) munmap(at, aligned - start);
    if (const size_t tail = start + reserved - (aligned + bytes); tail > 0) {
      munmap(reinterpret_cast<void*>(aligned + bytes), tail);
    }
    base = reinterpret_cast<uint8_t*>(aligned);
    // Advice only: without transparent huge pages the segment is in 4 KiB pages and still works.
    madvise(base, bytes, MADV_HUGEPAGE);
  }
  ~Segment() {
    if (base) munmap(base, bytes);
  }
  Segment(const Segment&) = delete;
  Segment& operator=(const Segment&) = delete;

  size_t bytes;
  uint8_t* base = nullptr;
};

std::shared_ptr<uint8_t> HugePageArena::allocate(size_t bytes) {
  const size_t size = round_up(bytes, kAlignment);
  std::lock_guard lock(mutex_);
  std::shared_ptr<Segment> segment = current_.lock();
  if (!segment || segment->bytes - used_ < size) {
    segment = std::make_shared<Segment>(std::max(kSegmentBytes, round_up(size, kHugePage)));
    if (!segment->base) return nullptr;
    current_ = segment;
    used_ = 0;
  }
  uint8_t* const at = segment->base + used_;
  used_ += size;
  // Shares the segment's ownership: the segment goes with its last allocation.
  return std::shared_ptr<uint8_t>(std::move(segment), at);
}

}  // namespace tg::cpu
