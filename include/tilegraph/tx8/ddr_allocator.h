#pragma once
// Places buffers in the chip's DDR address space: first fit over a free list, every block
// aligned to the DDR burst (64 bytes, the placement contract's alignment), neighbours merged on
// release. The DDR itself is sim::Ddr, paged as it is written; this only hands out addresses.
#include <cstdint>
#include <map>
#include <mutex>

namespace tg::tx8 {

inline constexpr uint64_t kDdrAlignment = 64;

class DdrAllocator {
 public:
  explicit DdrAllocator(uint64_t bytes);

  // The address of `bytes` (at least one burst) of free DDR; throws tg::Error when no free
  // block is large enough, saying how much is in use.
  uint64_t allocate(uint64_t bytes);
  // Frees a block allocate() returned (unknown addresses throw).
  void release(uint64_t address);

  uint64_t capacity() const { return capacity_; }
  uint64_t used() const;

 private:
  mutable std::mutex mutex_;
  uint64_t capacity_;
  uint64_t used_ = 0;
  std::map<uint64_t, uint64_t> free_;  // address -> bytes
  std::map<uint64_t, uint64_t> live_;  // address -> bytes
};

}  // namespace tg::tx8
