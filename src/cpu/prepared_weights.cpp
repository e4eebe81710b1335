#include "prepared_weights.h"

#include <mutex>
#include <shared_mutex>
#include <unordered_map>

#include "huge_page_arena.h"
#include "interleaved_rows.h"

namespace tg::cpu {

namespace {

// Every copy's memory: they are written once, then read as one stream each per decode step.
HugePageArena& copy_memory() {
  static HugePageArena* const arena = new HugePageArena;  // never destroyed, as the registry below
  return *arena;
}

// One interleaved matrix, shared by every PreparedWeight handed out for it.
class InterleavedCopy {
 public:
  // `memory` holds interleaved_bytes(t's type and shape): in 2 MiB pages (copy_memory()), since
  // one Zen 4 core decoded q4_0 ~1.35x and q8_0 ~1.15x as fast as from 4 KiB pages, which left the
  // copy no faster than the stored rows.
  InterleavedCopy(const Tensor& t, std::shared_ptr<uint8_t> memory, size_t bytes, ExecContext& exec)
      : bytes_(bytes), data_(std::move(memory)) {
    // On every thread: the page faults of the new memory cost more than the copying.
    exec.parallel_range(interleaved_groups(t.ne[1]), t.ne[0] * kInterleavedRows,
                        [&](const ThreadContext&, int64_t first, int64_t end) {
                          interleave_groups(t.type, t.ne[0], t.ne[1], t.data, t.nb[1], first, end, data_.get());
                        });
    matrix_ = {t.type, t.ne[0], t.ne[1], t.nb[1], data_.get()};
  }
  const InterleavedMatrix& matrix() const { return matrix_; }
  size_t bytes() const { return bytes_; }
  bool copies(const Tensor& a) const {
    return a.type == matrix_.type && a.ne[0] == matrix_.n && a.ne[1] == matrix_.rows && a.ne[2] == 1 && a.ne[3] == 1 &&
           a.nb[1] == matrix_.stride;
  }

 private:
  size_t bytes_;
  std::shared_ptr<uint8_t> data_;
  InterleavedMatrix matrix_{};
};

struct Registry {
  std::shared_mutex mutex;
  std::unordered_map<const void*, std::weak_ptr<InterleavedCopy>> copies;  // by the weight's data
};

Registry& registry() {
  static Registry* const r = new Registry;  // never destroyed: a model may outlive static destruction
  return *r;
}

class PreparedInterleaved final : public PreparedWeight {
 public:
  PreparedInterleaved(const void* data, std::shared_ptr<InterleavedCopy> copy) : data_(data), copy_(std::move(copy)) {}
  ~PreparedInterleaved() override {
    Registry& r = registry();
    std::unique_lock lock(r.mutex);
    copy_.reset();
    // The entry goes with the copy's last handle (it may since have become another copy's).
    if (const auto it = r.copies.find(data_); it != r.copies.end() && it->second.expired()) r.copies.erase(it);
  }
  size_t bytes() const override { return copy_->bytes(); }

 private:
  const void* data_;
  std::shared_ptr<InterleavedCopy> copy_;
};

bool laid_out(const Tensor& t) {
  return interleaves(t.type) && t.data && t.ne[2] == 1 && t.ne[3] == 1 && t.ne[1] > 0 &&
         t.ne[0] % int64_t(dtype_traits(t.type).block_size) == 0 && t.nb[0] == dtype_traits(t.type).type_size &&
         t.nb[1] >= t.row_bytes();
}

}  // namespace

const InterleavedMatrix* find_interleaved(const Tensor& a) {
  if (!interleaves(a.type)) return nullptr;
  Registry& r = registry();
  std::shared_lock lock(r.mutex);
  const auto it = r.copies.find(a.data);
  if (it == r.copies.end()) return nullptr;
  // The handles keep the copy alive while their weight is in use; a dead entry finds nothing.
  const std::shared_ptr<InterleavedCopy> copy = it->second.lock();
  return copy && copy->copies(a) ? &copy->matrix() : nullptr;
}

std::unique_ptr<PreparedWeight> interleave_weight(const Tensor& t, ExecContext& exec) {
  if (!laid_out(t)) return nullptr;
  Registry& r = registry();
  const auto registered = [&]() -> std::shared_ptr<InterleavedCopy> {
    const auto it = r.copies.find(t.data);
    std::shared_ptr<InterleavedCopy> copy = it == r.copies.end() ? nullptr : it->second.lock();
    return copy && copy->copies(t) ? copy : nullptr;
  };
  {
    std::shared_lock lock(r.mutex);
    if (std::shared_ptr<InterleavedCopy> copy = registered()) {
      return std::make_unique<PreparedInterleaved>(t.data, std::move(copy));
    }
  }
  // Laid out without the lock, so that other backends' decode steps do not wait for a model to
  // load. Two threads preparing the same weight at once both lay it out; the first to register
  // wins and the other's copy is dropped.
  const size_t bytes = interleaved_bytes(t.type, t.ne[0], t.ne[1]);
  std::shared_ptr<uint8_t> memory = copy_memory().allocate(bytes);
  if (!memory) return nullptr;  // decode then reads the stored rows, as for a weight without a copy
  auto made = std::make_shared<InterleavedCopy>(t, std::move(memory), bytes, exec);
  std::unique_lock lock(r.mutex);
  std::shared_ptr<InterleavedCopy> copy = registered();
  if (!copy) {
    copy = std::move(made);
    r.copies[t.data] = copy;
  }
  return std::make_unique<PreparedInterleaved>(t.data, std::move(copy));
}

}  // namespace tg::cpu
