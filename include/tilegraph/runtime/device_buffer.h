#pragma once
// The base of every device buffer (a Buffer whose bytes are not host memory). It reserves a range
// of host address space as large as the buffer (mmap with PROT_NONE: nothing is committed) and
// hands it out as base(), so that tensors placed in it get pointers that are distinct, add up
// like host pointers (views, the graph allocator, graph mode's address keys all work unchanged)
// and fault at once if host code dereferences one instead of going through set()/get(). While it
// lives the buffer is registered, so tensor_data.h finds it from any pointer into it.
#include <cstddef>
#include <cstdint>

#include "tilegraph/runtime/backend.h"

namespace tg {

class DeviceBuffer : public Buffer {
 public:
  // Throws tg::Error if the address space cannot be reserved.
  explicit DeviceBuffer(size_t bytes);
  ~DeviceBuffer() override;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* base() final { return base_; }
  size_t size() const final { return size_; }
  bool is_host() const final { return false; }
  // Subclasses implement device_address(), set(), get() and fill() over the device's memory.

 private:
  void* base_;
  size_t size_;
  size_t reserved_;  // at least one page, so that an empty buffer still has a unique base
};

}  // namespace tg
