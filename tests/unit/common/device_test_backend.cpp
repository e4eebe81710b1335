#include "device_test_backend.h"

#include <cstring>
#include <utility>

#include "tilegraph/runtime/reference_backend.h"
#include "tilegraph/runtime/tensor_data.h"

namespace tg::test {

VectorDeviceBuffer::VectorDeviceBuffer(size_t bytes, uint64_t device_address)
    : DeviceBuffer(bytes), device_address_(device_address), storage_(bytes, 0xA5) {}

void VectorDeviceBuffer::set(size_t offset, const void* src, size_t bytes) {
  check_range("set", offset, bytes);
  ++sets;
  if (bytes) std::memcpy(storage_.data() + offset, src, bytes);
}

void VectorDeviceBuffer::get(size_t offset, void* dst, size_t bytes) {
  check_range("get", offset, bytes);
  ++gets;
  if (bytes) std::memcpy(dst, storage_.data() + offset, bytes);
}

void VectorDeviceBuffer::fill(size_t offset, uint8_t value, size_t bytes) {
  check_range("fill", offset, bytes);
  ++fills;
  if (bytes) std::memset(storage_.data() + offset, value, bytes);
}

DeviceTestBackend::DeviceTestBackend(std::function<DType(DType)> weight_type)
    : weight_type_(std::move(weight_type)), reference_(make_reference_backend()) {}

std::unique_ptr<Buffer> DeviceTestBackend::alloc_buffer(size_t bytes) {
  auto buffer = std::make_unique<VectorDeviceBuffer>(bytes, next_address_);
  next_address_ += (bytes + 0xFFF) / 0x1000 * 0x1000 + 0x1000;
  ++buffers_allocated;
  return buffer;
}

bool DeviceTestBackend::supports_op(const Tensor& node, std::string* why) const {
  return reference_->supports_op(node, why);
}

void DeviceTestBackend::compute(const Graph& graph) {
  std::vector<std::pair<Tensor*, void*>> saved;
  auto remap = [&](Tensor* t) {
    auto* buffer = dynamic_cast<VectorDeviceBuffer*>(find_device_buffer(t->data));
    if (!buffer) return;
    saved.emplace_back(t, t->data);
    t->data = buffer->storage() + (static_cast<char*>(t->data) - static_cast<char*>(buffer->base()));
  };
  for (Tensor* t : graph.leafs()) remap(t);
  for (Tensor* t : graph.nodes()) remap(t);
  try {
    reference_->compute(graph);
  } catch (...) {
    for (auto& [t, data] : saved) t->data = data;
    throw;
  }
  for (auto& [t, data] : saved) t->data = data;
}

}  // namespace tg::test
