#include "tilegraph/tx8/ddr_allocator.h"

#include <string>

#include "tilegraph/core/error.h"

namespace tg::tx8 {

DdrAllocator::DdrAllocator(uint64_t bytes) : capacity_(bytes / kDdrAlignment * kDdrAlignment) {
  if (capacity_) free_[0] = capacity_;
}

uint64_t DdrAllocator::allocate(uint64_t bytes) {
  const uint64_t size = bytes == 0 ? kDdrAlignment : (bytes + kDdrAlignment - 1) / kDdrAlignment * kDdrAlignment;
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    if (it->second < size) continue;
    const uint64_t address = it->first;
    const uint64_t left = it->second - size;
    free_.erase(it);
    if (left) free_[address + size] = left;
    live_[address] = size;
    used_ += size;
    return address;
  }
  throw Error("tx8: DDR full: " + std::to_string(bytes) + " bytes wanted, " + std::to_string(used_) + " of " +
              std::to_string(capacity_) + " in use");
}

void DdrAllocator::release(uint64_t address) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto live = live_.find(address);
  if (live == live_.end()) throw Error("tx8: DDR release of " + std::to_string(address) + ", which is not allocated");
  uint64_t begin = address, size = live->second;
  used_ -= size;
  live_.erase(live);
  auto next = free_.lower_bound(begin);
  if (next != free_.end() && next->first == begin + size) {
    size += next->second;
    next = free_.erase(next);
  }
  if (next != free_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == begin) {
      begin = prev->first;
      size += prev->second;
      free_.erase(prev);
    }
  }
  free_[begin] = size;
}

uint64_t DdrAllocator::used() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return used_;
}

}  // namespace tg::tx8
