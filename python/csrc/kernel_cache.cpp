#include "kernel_cache.h"

namespace tg::python {

KernelCache& KernelCache::instance() {
  static KernelCache cache;
  return cache;
}

std::shared_ptr<KernelCache::Slot> KernelCache::slot(const std::string& key) {
  std::lock_guard lock(mutex_);
  std::shared_ptr<Slot>& s = slots_[key];
  if (!s) s = std::make_shared<Slot>();
  return s;
}

void KernelCache::forget(const std::string& key, const std::shared_ptr<Slot>& slot) {
  std::lock_guard lock(mutex_);
  if (const auto it = slots_.find(key); it != slots_.end() && it->second == slot) slots_.erase(it);
}

KernelCacheStats KernelCache::stats() const {
  return {kernels_.load(std::memory_order_relaxed), hits_.load(std::memory_order_relaxed),
          misses_.load(std::memory_order_relaxed)};
}

}  // namespace tg::python
