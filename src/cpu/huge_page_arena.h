#pragma once
// Memory for data that is written once and then streamed many times (the interleaved weight
// copies, prepared_weights.h), handed out back to back from large mappings in 2 MiB pages. Each
// allocation on its own would have whole 2 MiB pages only in its 2 MiB-aligned interior: a model's
// smaller matrices (d_model 2048: k and v, 1.1 MiB) would get none, and rounding each up to 2 MiB
// would cost a third more memory. Packed together, every byte but a segment's last page is in 2 MiB
// pages.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>

namespace tg::cpu {

class HugePageArena {
 public:
  // Bytes of address space each segment reserves (pages are only backed once written); a larger
  // allocation gets a segment of its own size.
  static constexpr size_t kSegmentBytes = size_t(64) << 20;
  static constexpr size_t kAlignment = 64;  // a cache line: no two allocations share one

  // `bytes` (> 0) of zeroed memory, kAlignment-aligned, valid while the result (or a copy of it)
  // lives; null when the system grants no more address space (a lowered RLIMIT_AS, say). A segment
  // is unmapped with the last allocation in it.
  std::shared_ptr<uint8_t> allocate(size_t bytes);

 private:
  struct Segment;
  std::mutex mutex_;
  // Not owned: the allocations in it keep it mapped, so that freeing them all gives it back.
  std::weak_ptr<Segment> current_;
  size_t used_ = 0;  // bytes of current_ handed out
};

}  // namespace tg::cpu
