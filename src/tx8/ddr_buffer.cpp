#include "ddr_buffer.h"

#include <algorithm>
#include <vector>

namespace tg::tx8 {

DdrBuffer::DdrBuffer(std::shared_ptr<Device> device, size_t bytes)
    : DeviceBuffer(bytes), device_(device), block_(std::move(device), bytes) {}

void DdrBuffer::set(size_t offset, const void* src, size_t bytes) {
  check_range("set", offset, bytes);
  if (!bytes) return;
  std::lock_guard<std::mutex> lock(device_->mutex);
  device_->chip.ddr().write(block_.address() + offset, src, bytes);
}

void DdrBuffer::get(size_t offset, void* dst, size_t bytes) {
  check_range("get", offset, bytes);
  if (!bytes) return;
  std::lock_guard<std::mutex> lock(device_->mutex);
  device_->chip.ddr().read(block_.address() + offset, dst, bytes);
}

void DdrBuffer::fill(size_t offset, uint8_t value, size_t bytes) {
  check_range("fill", offset, bytes);
  // In pieces, so that clearing a large cache needs no buffer of its size.
  const std::vector<uint8_t> chunk(std::min<size_t>(bytes, size_t(1) << 20), value);
  std::lock_guard<std::mutex> lock(device_->mutex);
  for (size_t done = 0; done < bytes; done += chunk.size()) {
    device_->chip.ddr().write(block_.address() + offset + done, chunk.data(), std::min(chunk.size(), bytes - done));
  }
}

}  // namespace tg::tx8
