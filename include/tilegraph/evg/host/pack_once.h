#pragma once
// Packing on demand, shared between threads: the first thread that needs a piece of a packed
// operand packs it, any other waits for it. Packing then overlaps other threads' arithmetic
// instead of standing before it as a phase of its own, and a piece is still in cache when its
// packer first uses it.
#include <atomic>
#include <cstdint>
#include <thread>

#include "tilegraph/evg/kernel/target.h"

namespace tg::evg::host {
inline namespace TG_EVG_TARGET_NAMESPACE {

class PackOnce {
 public:
  // The state of one piece, kept in zeroed workspace memory (all pieces start unpacked).
  using State = std::atomic<uint32_t>;
  static_assert(State::is_always_lock_free && sizeof(State) == sizeof(uint32_t));

  // Packs the piece with pack() unless another thread has claimed it; returns false if claimed.
  template <class Pack>
  static bool try_pack(State& state, Pack&& pack) {
    uint32_t expected = kUnpacked;
    if (state.load(std::memory_order_acquire) != kUnpacked ||
        !state.compare_exchange_strong(expected, kPacking, std::memory_order_acquire)) {
      return false;
    }
    pack();
    state.store(kPacked, std::memory_order_release);
    return true;
  }

  // Returns once the piece is packed (by whichever thread claimed it).
  static void wait(const State& state) {
    for (int spins = 0; state.load(std::memory_order_acquire) != kPacked; ++spins) {
      // A piece takes microseconds to pack; after a while the packer has probably lost its core.
      if (spins > kSpinsBeforeYield) std::this_thread::yield();
    }
  }

 private:
  static constexpr uint32_t kUnpacked = 0, kPacking = 1, kPacked = 2;
  static constexpr int kSpinsBeforeYield = 1 << 14;
};

}  // namespace TG_EVG_TARGET_NAMESPACE
}  // namespace tg::evg::host
