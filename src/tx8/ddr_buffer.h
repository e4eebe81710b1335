#pragma once
// The simulated chip a tx8 backend owns and the device buffers it hands out: each a block of
// the chip's DDR (DdrAllocator), its bytes reached through sim::Ddr. A buffer keeps the chip
// alive, so weights placed by a backend may outlive it (a model destroyed after its backend).
#include <cstdint>
#include <memory>
#include <mutex>

#include "tilegraph/runtime/device_buffer.h"
#include "tilegraph/sim/chip.h"
#include "tilegraph/tx8/ddr_allocator.h"

namespace tg::tx8 {

struct Device {
  explicit Device(const sim::ChipConfig& config) : chip(config), ddr(config.ddr.bytes) {}
  std::mutex mutex;  // the chip runs one program or copy at a time
  sim::Chip chip;
  DdrAllocator ddr;
};

// A block of DDR freed with its owner.
class DdrBlock {
 public:
  DdrBlock(std::shared_ptr<Device> device, uint64_t bytes)
      : device_(std::move(device)), address_(device_->ddr.allocate(bytes)) {}
  ~DdrBlock() { device_->ddr.release(address_); }
  DdrBlock(const DdrBlock&) = delete;
  DdrBlock& operator=(const DdrBlock&) = delete;
  uint64_t address() const { return address_; }

 private:
  std::shared_ptr<Device> device_;
  uint64_t address_;
};

class DdrBuffer final : public DeviceBuffer {
 public:
  DdrBuffer(std::shared_ptr<Device> device, size_t bytes);
  uint64_t device_address() override { return block_.address(); }
  void set(size_t offset, const void* src, size_t bytes) override;
  void get(size_t offset, void* dst, size_t bytes) override;
  void fill(size_t offset, uint8_t value, size_t bytes) override;

 private:
  std::shared_ptr<Device> device_;
  DdrBlock block_;
};

}  // namespace tg::tx8
