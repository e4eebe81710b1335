#pragma once
// A flat open-addressing map from tensor pointers to 32-bit values (ggml's hash set, with a
// value). Graph building and allocation run for every decode step and look up every tensor a few
// times; a node-based std::unordered_map spent most of that time in malloc. clear() keeps the
// table, so a map reused across steps allocates nothing.
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "tilegraph/core/tensor.h"

namespace tg {

class TensorMap {
 public:
  // The value of `t`, or null when absent. Valid until the next insertion.
  int32_t* find(const Tensor* t) {
    if (slots_.empty()) return nullptr;
    for (size_t i = home(t);; i = (i + 1) & mask()) {
      if (slots_[i].key == t) return &slots_[i].value;
      if (!slots_[i].key) return nullptr;
    }
  }
  const int32_t* find(const Tensor* t) const { return const_cast<TensorMap*>(this)->find(t); }

  // Inserts `t` with `value` unless present; returns its slot's value and whether it was inserted.
  std::pair<int32_t*, bool> try_emplace(const Tensor* t, int32_t value) {
    if (2 * (size_ + 1) > slots_.size()) grow();
    for (size_t i = home(t);; i = (i + 1) & mask()) {
      if (slots_[i].key == t) return {&slots_[i].value, false};
      if (!slots_[i].key) {
        slots_[i] = {t, value};
        ++size_;
        return {&slots_[i].value, true};
      }
    }
  }

  size_t size() const { return size_; }
  void clear() {
    for (Slot& s : slots_) s.key = nullptr;
    size_ = 0;
  }
  // Room for `n` entries without growing.
  void reserve(size_t n) {
    if (2 * n > slots_.size()) rehash(std::bit_ceil(2 * n));
  }

 private:
  struct Slot {
    const Tensor* key = nullptr;
    int32_t value = 0;
  };

  size_t mask() const { return slots_.size() - 1; }
  size_t home(const Tensor* t) const {
    // Tensors are 8-byte aligned objects of a few hundred bytes: multiply to spread the bits.
    return size_t((uint64_t(reinterpret_cast<uintptr_t>(t)) * 0x9e3779b97f4a7c15ull) >> 32) & mask();
  }
  void grow() { rehash(slots_.empty() ? 64 : 2 * slots_.size()); }
  void rehash(size_t capacity) {
    std::vector<Slot> old(capacity);
    old.swap(slots_);
    size_ = 0;
    for (const Slot& s : old) {
      if (s.key) try_emplace(s.key, s.value);
    }
  }

  std::vector<Slot> slots_;
  size_t size_ = 0;
};

}  // namespace tg
