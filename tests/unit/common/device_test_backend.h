#pragma once
// A backend whose buffers are device buffers (runtime/device_buffer.h) over host vectors the
// test can see: everything outside compute() must reach its tensors through set()/get(), or it
// dereferences reserved, unreadable address space and crashes. compute() runs the reference
// backend with every tensor's data pointed at the vectors for the duration of the call.
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "tilegraph/runtime/backend.h"
#include "tilegraph/runtime/device_buffer.h"

namespace tg::test {

class VectorDeviceBuffer final : public DeviceBuffer {
 public:
  VectorDeviceBuffer(size_t bytes, uint64_t device_address);
  uint64_t device_address() override { return device_address_; }
  void set(size_t offset, const void* src, size_t bytes) override;
  void get(size_t offset, void* dst, size_t bytes) override;
  void fill(size_t offset, uint8_t value, size_t bytes) override;
  uint8_t* storage() { return storage_.data(); }

  uint64_t sets = 0, gets = 0, fills = 0;  // calls, for tests that check the traffic

 private:
  uint64_t device_address_;
  std::vector<uint8_t> storage_;
};

class DeviceTestBackend final : public Backend {
 public:
  // `weight_type` as Backend::weight_type (default: every type as stored).
  explicit DeviceTestBackend(std::function<DType(DType)> weight_type = {});
  std::string_view name() const override { return "device-test"; }
  std::unique_ptr<Buffer> alloc_buffer(size_t bytes) override;
  bool host_buffers() const override { return false; }
  DType weight_type(DType stored) const override { return weight_type_ ? weight_type_(stored) : stored; }
  bool supports_op(const Tensor& node, std::string* why) const override;
  void compute(const Graph& graph) override;

  uint64_t buffers_allocated = 0;

 private:
  std::function<DType(DType)> weight_type_;
  std::unique_ptr<Backend> reference_;
  uint64_t next_address_ = 0x1000;
};

}  // namespace tg::test
