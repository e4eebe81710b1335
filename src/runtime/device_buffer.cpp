#include "tilegraph/runtime/device_buffer.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "device_registry.h"
#include "tilegraph/core/error.h"

namespace tg {

namespace {

size_t page_size() {
  static const size_t size = size_t(sysconf(_SC_PAGESIZE));
  return size;
}

}  // namespace

DeviceBuffer::DeviceBuffer(size_t bytes) : size_(bytes) {
  reserved_ = std::max<size_t>((bytes + page_size() - 1) / page_size() * page_size(), page_size());
  base_ = mmap(nullptr, reserved_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base_ == MAP_FAILED) {
    throw Error("device buffer: cannot reserve " + std::to_string(bytes) +
                " bytes of address space: " + std::strerror(errno));
  }
  device_registry().add(base_, reserved_, this);
}

DeviceBuffer::~DeviceBuffer() {
  device_registry().remove(base_);
  munmap(base_, reserved_);
}

}  // namespace tg
