#pragma once
// The live device buffers by address range, for tensor_data.h. Lookups take a shared lock; with
// no device buffer alive they take none (host-only programs pay one atomic load).
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <shared_mutex>

#include "tilegraph/runtime/backend.h"

namespace tg {

class DeviceRegistry {
 public:
  void add(const void* begin, size_t bytes, Buffer* buffer);
  void remove(const void* begin);
  Buffer* find(const void* p) const;

 private:
  struct Range {
    uintptr_t end;
    Buffer* buffer;
  };
  mutable std::shared_mutex mutex_;
  std::map<uintptr_t, Range> ranges_;  // by first address
  std::atomic<size_t> live_{0};
};

DeviceRegistry& device_registry();

}  // namespace tg
