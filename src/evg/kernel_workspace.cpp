#include "tilegraph/evg/frontend/kernel_workspace.h"

#include <algorithm>
#include <cstring>
#include <new>

namespace tg::evg::frontend {

namespace {
constexpr size_t kAlignment = 64;
}

void KernelWorkspace::Free::operator()(std::byte* p) const { ::operator delete[](p, std::align_val_t(kAlignment)); }

void* KernelWorkspace::prepare(const driver::WorkspaceSizes& sizes, const void* owner) {
  const size_t total = sizes.total();
  if (total > capacity_) {
    // Grown with headroom, so that a sequence of slightly larger problems does not reallocate
    // each time.
    const size_t bytes = (std::max(total, capacity_ + capacity_ / 2) + kAlignment - 1) / kAlignment * kAlignment;
    data_.reset(static_cast<std::byte*>(::operator new[](bytes, std::align_val_t(kAlignment))));
    capacity_ = bytes;
    epilogue_bytes_ = 0;
  }
  if (owner != owner_ || sizes.epilogue_bytes > epilogue_bytes_) {
    std::memset(data_.get(), 0, sizes.epilogue_bytes);
    owner_ = owner;
  }
  // Beyond the epilogue's part, this run's GEMM writes what it likes.
  epilogue_bytes_ = sizes.epilogue_bytes;
  return data_.get();
}

}  // namespace tg::evg::frontend
