#pragma once
// Reading and writing tensor data wherever it lives (ggml_backend_tensor_set / _get / _memset):
// host memory directly, a device buffer's through its set()/get(). Code that fills inputs, loads
// weights or reads results goes through these, so it works for every backend; kernels of a host
// backend keep using `data` directly.
#include <cstddef>
#include <cstdint>

#include "tilegraph/core/tensor.h"
#include "tilegraph/runtime/backend.h"

namespace tg {

// The live device buffer whose address range holds `data`, or null for host memory.
Buffer* find_device_buffer(const void* data);
// Where `data` is in the device's address space: device_address() + offset for a device buffer,
// the pointer's value for host memory.
uint64_t device_address_of(const void* data);
// Whether `t`'s data is host memory (true for a tensor without data).
bool tensor_on_host(const Tensor& t);

// Copy bytes [offset, offset + bytes) of `t`'s data (as laid out from t.data, nbytes() long) in
// or out. Throws tg::Error for a tensor without data or a range past nbytes().
void tensor_set(const Tensor& t, const void* src, size_t offset, size_t bytes);
void tensor_get(const Tensor& t, void* dst, size_t offset, size_t bytes);
// Every byte of `t`'s data set to `value`.
void tensor_fill(const Tensor& t, uint8_t value);

}  // namespace tg
