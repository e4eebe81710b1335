#include "tilegraph/runtime/tensor_data.h"

#include <cstring>
#include <mutex>
#include <string>

#include "device_registry.h"
#include "tilegraph/core/error.h"

namespace tg {

void DeviceRegistry::add(const void* begin, size_t bytes, Buffer* buffer) {
  std::unique_lock lock(mutex_);
  const auto first = reinterpret_cast<uintptr_t>(begin);
  ranges_[first] = Range{first + bytes, buffer};
  live_.fetch_add(1, std::memory_order_release);
}

void DeviceRegistry::remove(const void* begin) {
  std::unique_lock lock(mutex_);
  if (ranges_.erase(reinterpret_cast<uintptr_t>(begin))) live_.fetch_sub(1, std::memory_order_release);
}

Buffer* DeviceRegistry::find(const void* p) const {
  if (live_.load(std::memory_order_acquire) == 0 || !p) return nullptr;
  const auto address = reinterpret_cast<uintptr_t>(p);
  std::shared_lock lock(mutex_);
  auto it = ranges_.upper_bound(address);
  if (it == ranges_.begin()) return nullptr;
  --it;
  return address < it->second.end ? it->second.buffer : nullptr;
}

DeviceRegistry& device_registry() {
  static DeviceRegistry registry;
  return registry;
}

namespace {

// The device buffer of `t`'s data and the offset of its first byte in it, checking the range.
Buffer* locate(const char* what, const Tensor& t, size_t offset, size_t bytes, size_t* at) {
  if (!t.data) throw Error(std::string(what) + ": " + describe(t) + " has no data");
  if (offset > t.nbytes() || bytes > t.nbytes() - offset) {
    throw Error(std::string(what) + ": bytes [" + std::to_string(offset) + ", " + std::to_string(offset + bytes) +
                ") outside " + describe(t) + " (" + std::to_string(t.nbytes()) + " bytes)");
  }
  Buffer* buffer = device_registry().find(t.data);
  if (buffer) *at = size_t(static_cast<const char*>(t.data) - static_cast<const char*>(buffer->base())) + offset;
  return buffer;
}

}  // namespace

Buffer* find_device_buffer(const void* data) { return device_registry().find(data); }

uint64_t device_address_of(const void* data) {
  Buffer* buffer = device_registry().find(data);
  if (!buffer) return reinterpret_cast<uintptr_t>(data);
  return buffer->device_address() + uint64_t(static_cast<const char*>(data) - static_cast<const char*>(buffer->base()));
}

bool tensor_on_host(const Tensor& t) { return device_registry().find(t.data) == nullptr; }

void tensor_set(const Tensor& t, const void* src, size_t offset, size_t bytes) {
  size_t at = 0;
  if (Buffer* buffer = locate("tensor_set", t, offset, bytes, &at)) {
    buffer->set(at, src, bytes);
  } else if (bytes) {
    std::memcpy(static_cast<char*>(t.data) + offset, src, bytes);
  }
}

void tensor_get(const Tensor& t, void* dst, size_t offset, size_t bytes) {
  size_t at = 0;
  if (Buffer* buffer = locate("tensor_get", t, offset, bytes, &at)) {
    buffer->get(at, dst, bytes);
  } else if (bytes) {
    std::memcpy(dst, static_cast<const char*>(t.data) + offset, bytes);
  }
}

void tensor_fill(const Tensor& t, uint8_t value) {
  size_t at = 0;
  const size_t bytes = t.nbytes();
  if (Buffer* buffer = locate("tensor_fill", t, 0, bytes, &at)) {
    buffer->fill(at, value, bytes);
  } else if (bytes) {
    std::memset(t.data, value, bytes);
  }
}

}  // namespace tg
