#pragma once
// Memory a front end kernel runs in (driver/epilogue_params.h: the epilogue's per-thread scratch,
// then, for a fused GEMM, its packed operands and accumulator blocks), kept across runs so that a
// steady run allocates nothing. It grows to the largest problem run in it. Not thread-safe: one per
// concurrent caller.
#include <cstddef>
#include <memory>
#include <mutex>

#include "tilegraph/evg/driver/epilogue_params.h"

namespace tg::evg::frontend {

class KernelWorkspace {
 public:
  KernelWorkspace() = default;

  size_t capacity() const { return capacity_; }

  // At least sizes.total() bytes, 64-byte aligned, whose first sizes.epilogue_bytes hold the
  // scratch of kernel `owner`: zeroed when that part is new to it (a first run, a reallocation,
  // more threads than before, another kernel in between), otherwise left as its last run left it.
  void* prepare(const driver::WorkspaceSizes& sizes, const void* owner);

 private:
  struct Free {
    void operator()(std::byte* p) const;
  };
  std::unique_ptr<std::byte[], Free> data_;
  size_t capacity_ = 0;
  // The prefix that holds `owner_`'s scratch and nothing else's.
  size_t epilogue_bytes_ = 0;
  const void* owner_ = nullptr;
};

// A kernel's own workspace, for callers that bring none: one caller at a time runs in it, a
// concurrent one in a temporary workspace.
class SharedWorkspace {
 public:
  template <class Run>
  void use(Run&& run) {
    std::unique_lock lock(mutex_, std::try_to_lock);
    if (lock.owns_lock()) {
      run(workspace_);
    } else {
      KernelWorkspace temporary;
      run(temporary);
    }
  }

 private:
  std::mutex mutex_;
  KernelWorkspace workspace_;
};

}  // namespace tg::evg::frontend
