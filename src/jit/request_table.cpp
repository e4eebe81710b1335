#include "request_table.h"

#include <cstring>

namespace tg::jit {

namespace {

uint64_t load8(const char* p) {
  uint64_t w;
  std::memcpy(&w, p, 8);
  return w;
}

uint64_t load4(const char* p) {
  uint32_t w;
  std::memcpy(&w, p, 4);
  return w;
}

// Folds a string into the hash a word at a time; the tail is read with overlapping loads
// (wyhash's trick) so no byte loop or memcpy call is needed. The length goes into the last word.
[[gnu::always_inline]] inline uint64_t mix_string(uint64_t h, std::string_view s) {
  constexpr uint64_t kMul = 0x9e3779b97f4a7c15ULL;
  const char* p = s.data();
  size_t n = s.size();
  const uint64_t length = uint64_t(n) << 56;
  for (; n > 8; p += 8, n -= 8) h = (h ^ load8(p)) * kMul;
  uint64_t tail = 0;
  if (n >= 4) {
    tail = (load4(p) << 32) | load4(p + n - 4);
  } else if (n > 0) {
    tail = (uint64_t(uint8_t(p[0])) << 16) | (uint64_t(uint8_t(p[n / 2])) << 8) | uint8_t(p[n - 1]);
  }
  return (h ^ tail ^ length) * kMul;
}

[[gnu::always_inline]] inline bool same(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  const char* p = a.data();
  const char* q = b.data();
  size_t n = a.size();
  for (; n > 8; p += 8, q += 8, n -= 8) {
    if (load8(p) != load8(q)) return false;
  }
  if (n >= 4) return load4(p) == load4(q) && load4(p + n - 4) == load4(q + n - 4);
  // Bytes 0, n/2 and n-1 cover every byte of a string shorter than 4.
  return n == 0 || (p[0] == q[0] && p[n / 2] == q[n / 2] && p[n - 1] == q[n - 1]);
}

constexpr uint64_t kSeed = 0x243f6a8885a308d3ULL;

uint64_t request_hash(const RequestView& r) {
  // Paths of one program's templates differ mostly at the end, and macro names are nearly always
  // the same set for one template: hashing the path's last 16 bytes and the macro values keeps
  // the hash short, and matches() compares everything anyway.
  const std::string_view path = r.template_path;
  uint64_t h = mix_string(kSeed + uint64_t(r.type) + path.size(), path.substr(path.size() > 16 ? path.size() - 16 : 0));
  for (const auto& macro : *r.macros) h = mix_string(h, macro.second);
  for (const std::string& dir : *r.include_dirs) h = mix_string(h, dir);
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  return h ^ (h >> 33);
}

}  // namespace

struct RequestTable::Entry {
  uint64_t hash;
  std::string template_path;
  MacroMap macros;
  KernelType type;
  std::vector<std::string> include_dirs;
  Hit hit;

  bool matches(uint64_t h, const RequestView& r) const {
    if (h != hash || r.type != type || r.macros->size() != macros.size() ||
        r.include_dirs->size() != include_dirs.size() || !same(r.template_path, template_path)) {
      return false;
    }
    for (auto a = r.macros->begin(), b = macros.begin(); b != macros.end(); ++a, ++b) {
      if (!same(a->second, b->second) || !same(a->first, b->first)) return false;
    }
    for (size_t i = 0; i < include_dirs.size(); ++i) {
      if (!same((*r.include_dirs)[i], include_dirs[i])) return false;
    }
    return true;
  }
};

struct RequestTable::Table {
  explicit Table(size_t capacity) : mask(capacity - 1), slots(new std::atomic<const Entry*>[capacity]) {
    for (size_t i = 0; i < capacity; ++i) slots[i].store(nullptr, std::memory_order_relaxed);
  }
  void place(const Entry* e) {
    size_t i = e->hash & mask;
    while (slots[i].load(std::memory_order_relaxed)) i = (i + 1) & mask;
    slots[i].store(e, std::memory_order_release);
  }
  const size_t mask;
  std::unique_ptr<std::atomic<const Entry*>[]> slots;
};

RequestTable::RequestTable() {
  tables_.push_back(std::make_unique<Table>(64));
  table_.store(tables_.back().get(), std::memory_order_release);
}

RequestTable::~RequestTable() = default;

const RequestTable::Hit* RequestTable::find(const RequestView& request) const {
  const uint64_t h = request_hash(request);
  const Table* t = table_.load(std::memory_order_acquire);
  for (size_t i = h & t->mask;; i = (i + 1) & t->mask) {
    const Entry* e = t->slots[i].load(std::memory_order_acquire);
    if (!e) return nullptr;
    if (e->matches(h, request)) return &e->hit;
  }
}

void RequestTable::insert(const RequestView& request, Hit hit) {
  std::lock_guard lock(write_mutex_);
  if (find(request)) return;
  const Table* current = table_.load(std::memory_order_relaxed);
  // At most half full, so probes stay short and always reach an empty slot.
  if (2 * (count_ + 1) > current->mask + 1) {
    auto grown = std::make_unique<Table>(2 * (current->mask + 1));
    for (const auto& e : entries_) grown->place(e.get());
    tables_.push_back(std::move(grown));
    table_.store(tables_.back().get(), std::memory_order_release);
  }
  entries_.push_back(std::make_unique<Entry>(Entry{request_hash(request), std::string(request.template_path),
                                                   *request.macros, request.type, *request.include_dirs, hit}));
  tables_.back()->place(entries_.back().get());
  ++count_;
}

}  // namespace tg::jit
