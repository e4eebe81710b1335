#pragma once
// The in-process cache in front of the JIT: one CompiledGemm per distinct call, so that a steady
// call runs its kernel at once. Without it every call would build a CompiledGemm: parse, check and
// lower the epilogue, then hash the C++ before the JIT's memory cache could answer. A key is the
// epilogue with everything its Signature is worked out from (operand names, dimensions and element
// types, outputs, out_dtype).
//
// The first call of a key builds its kernel (seconds on a JIT cache miss) while calls of other
// keys go on; concurrent first calls of one key wait for one build. A failed build leaves nothing
// behind, and the next call of its key tries again.
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "tilegraph/evg/frontend/compiled_gemm.h"

namespace tg::python {

// A kernel with the Signature it was built for, which says the kinds and types of its operands.
struct CachedGemm {
  CachedGemm(std::string_view epilogue, const evg::frontend::Signature& sig) : signature(sig), gemm(epilogue, sig) {}

  evg::frontend::Signature signature;
  evg::frontend::CompiledGemm gemm;
};

struct KernelCacheStats {
  int64_t kernels = 0;  // built and held
  int64_t hits = 0;     // calls that found their kernel built
  int64_t misses = 0;   // calls that built it (a failed build counts as neither)
};

class KernelCache {
 public:
  static KernelCache& instance();

  // The kernel for `key`; `build()` (returning a Signature) makes it on a miss.
  template <class Build>
  std::shared_ptr<const CachedGemm> get(const std::string& key, std::string_view epilogue, Build&& build);

  KernelCacheStats stats() const;

 private:
  struct Slot {
    std::mutex mutex;
    std::shared_ptr<const CachedGemm> gemm;
  };
  std::shared_ptr<Slot> slot(const std::string& key);
  void forget(const std::string& key, const std::shared_ptr<Slot>& slot);

  std::mutex mutex_;
  std::unordered_map<std::string, std::shared_ptr<Slot>> slots_;
  std::atomic<int64_t> kernels_{0}, hits_{0}, misses_{0};
};

template <class Build>
std::shared_ptr<const CachedGemm> KernelCache::get(const std::string& key, std::string_view epilogue, Build&& build) {
  const std::shared_ptr<Slot> s = slot(key);
  std::lock_guard lock(s->mutex);
  if (s->gemm) {
    hits_.fetch_add(1, std::memory_order_relaxed);
    return s->gemm;
  }
  try {
    s->gemm = std::make_shared<const CachedGemm>(epilogue, build());
  } catch (...) {
    forget(key, s);
    throw;
  }
  misses_.fetch_add(1, std::memory_order_relaxed);
  kernels_.fetch_add(1, std::memory_order_relaxed);
  return s->gemm;
}

}  // namespace tg::python
