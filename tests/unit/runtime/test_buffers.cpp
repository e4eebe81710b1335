// The Buffer interface for host and device memory, and tensor_data.h's access through it.
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <vector>

#include "common/device_test_backend.h"
#include "common/expect_error.h"
#include "common/tensor_utils.h"
#include "tilegraph/core/context.h"
#include "tilegraph/core/ops.h"
#include "tilegraph/runtime/graph_allocator.h"
#include "tilegraph/runtime/reference_backend.h"
#include "tilegraph/runtime/tensor_data.h"

namespace tg {
namespace {

std::vector<uint8_t> bytes(size_t n, uint8_t first) {
  std::vector<uint8_t> v(n);
  std::iota(v.begin(), v.end(), first);
  return v;
}

TEST(HostBuffer, IsHostMemoryThatSetGetAndFillReach) {
  auto buffer = make_host_buffer(256);
  EXPECT_TRUE(buffer->is_host());
  EXPECT_EQ(buffer->device_address(), reinterpret_cast<uintptr_t>(buffer->base()));
  const std::vector<uint8_t> in = bytes(100, 7);
  buffer->set(10, in.data(), in.size());
  EXPECT_EQ(std::memcmp(static_cast<char*>(buffer->base()) + 10, in.data(), in.size()), 0);
  std::vector<uint8_t> out(100);
  buffer->get(10, out.data(), out.size());
  EXPECT_EQ(out, in);
  buffer->fill(20, 0xEE, 5);
  buffer->get(18, out.data(), 8);
  EXPECT_EQ(std::vector<uint8_t>(out.begin(), out.begin() + 8),
            (std::vector<uint8_t>{in[8], in[9], 0xEE, 0xEE, 0xEE, 0xEE, 0xEE, in[15]}));
  buffer->clear(0);
  buffer->get(0, out.data(), 100);
  EXPECT_EQ(out, std::vector<uint8_t>(100, 0));
}

TEST(HostBuffer, RefusesRangesPastItsEnd) {
  auto buffer = make_host_buffer(64);
  uint8_t b[8] = {};
  test::expect_error([&] { buffer->set(60, b, 8); }, "buffer set: bytes [60, 68) outside the buffer of 64 bytes");
  test::expect_error([&] { buffer->get(65, b, 0); }, "buffer get: bytes [65, 65) outside");
  test::expect_error([&] { buffer->fill(0, 1, 65); }, "buffer fill: bytes [0, 65) outside");
}

TEST(DeviceBuffer, IsFoundFromAnyPointerIntoItWhileItLives) {
  const void* inside = nullptr;
  {
    test::VectorDeviceBuffer buffer(1000, 0x40000);
    EXPECT_FALSE(buffer.is_host());
    char* base = static_cast<char*>(buffer.base());
    inside = base + 999;
    EXPECT_EQ(find_device_buffer(base), &buffer);
    EXPECT_EQ(find_device_buffer(base + 999), &buffer);
    EXPECT_EQ(find_device_buffer(base + 4096), nullptr);  // past its reservation
    EXPECT_EQ(device_address_of(base + 123), 0x40000u + 123);
    int host = 0;
    EXPECT_EQ(find_device_buffer(&host), nullptr);
    EXPECT_EQ(device_address_of(&host), reinterpret_cast<uintptr_t>(&host));

    test::VectorDeviceBuffer other(10, 0x90000);
    EXPECT_EQ(find_device_buffer(other.base()), &other);
    EXPECT_EQ(find_device_buffer(base), &buffer);
  }
  EXPECT_EQ(find_device_buffer(inside), nullptr);
}

TEST(DeviceBuffer, EvenAnEmptyOneHasABaseOfItsOwn) {
  test::VectorDeviceBuffer a(0, 0), b(0, 0);
  EXPECT_NE(a.base(), b.base());
  EXPECT_EQ(find_device_buffer(a.base()), &a);
}

TEST(TensorData, GoesThroughTheDeviceBufferOrStraightToHostMemory) {
  Context ctx(ContextOptions{.no_alloc = true});
  Tensor* t = ctx.new_tensor(DType::F32, {8, 3});
  test::VectorDeviceBuffer buffer(4096, 0x1000);
  t->data = static_cast<char*>(buffer.base()) + 128;
  EXPECT_FALSE(tensor_on_host(*t));
  std::vector<float> in(24);
  std::iota(in.begin(), in.end(), 1.0f);
  tensor_set(*t, in.data(), 0, 96);
  EXPECT_EQ(buffer.sets, 1u);
  EXPECT_EQ(std::memcmp(buffer.storage() + 128, in.data(), 96), 0);
  std::vector<float> out(4);
  tensor_get(*t, out.data(), 16, 16);
  EXPECT_EQ(out, (std::vector<float>{5, 6, 7, 8}));
  tensor_fill(*t, 0);
  tensor_get(*t, out.data(), 80, 16);
  EXPECT_EQ(out, (std::vector<float>{0, 0, 0, 0}));
  EXPECT_EQ(buffer.fills, 1u);
  test::expect_error([&] { tensor_set(*t, in.data(), 90, 8); }, "tensor_set: bytes [90, 98) outside");

  std::vector<float> host(24);
  t->data = host.data();
  EXPECT_TRUE(tensor_on_host(*t));
  tensor_set(*t, in.data(), 0, 96);
  EXPECT_EQ(host, in);
  t->data = nullptr;
  test::expect_error([&] { tensor_get(*t, out.data(), 0, 4); }, "has no data");
}

// A graph allocated in device memory computes what it computes in host memory; its inputs and
// results cross through set/get (the buffer's memory cannot be read any other way).
TEST(TensorData, AGraphInDeviceMemoryGivesTheHostResults) {
  test::Rng rng(3);
  Context ctx(ContextOptions{.no_alloc = true});
  Tensor* a = ctx.new_tensor(DType::F32, {37, 5});
  Tensor* b = ctx.new_tensor(DType::F32, {37, 3});
  a->flags |= kFlagInput;
  b->flags |= kFlagInput;
  Tensor* out = soft_max(ctx, mul_mat(ctx, a, b), nullptr, 1.0f);
  Graph graph = Graph::build(out);

  Context host_ctx;
  Tensor* ha = host_ctx.new_tensor(DType::F32, {37, 5});
  Tensor* hb = host_ctx.new_tensor(DType::F32, {37, 3});
  test::fill_uniform(*ha, rng);
  test::fill_uniform(*hb, rng);
  Tensor* hout = soft_max(host_ctx, mul_mat(host_ctx, ha, hb), nullptr, 1.0f);
  make_reference_backend()->compute(Graph::build(hout));

  test::DeviceTestBackend device;
  GraphAllocator allocator;
  allocator.allocate(graph, device);
  EXPECT_EQ(device.buffers_allocated, 1u);
  for (const Tensor* t : {a, b, out}) EXPECT_FALSE(tensor_on_host(*t)) << describe(*t);
  tensor_set(*a, ha->data, 0, ha->nbytes());
  tensor_set(*b, hb->data, 0, hb->nbytes());
  device.compute(graph);
  std::vector<float> result(size_t(out->nelements()));
  tensor_get(*out, result.data(), 0, out->nbytes());
  EXPECT_EQ(result, test::read_f32(*hout));
}

}  // namespace
}  // namespace tg
