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

uint64_t finish(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  return h ^ (h >> 33);
}

}  // namespace

// The caller's request with its macros gathered in one walk of the map, which both the hash and
// the comparison then read: walking a std::map costs a call per step.
struct RequestTable::Probe {
  static constexpr size_t kInline = 16;
  // Macro names are left out of the hash: for one template they are nearly always the same
  // set, and matches() compares them anyway.
  explicit Probe(const RequestView& r) : request(r) {
    // Paths of one program's templates differ mostly at the end: hashing the last 16 bytes keeps
    // the hash short, and matches() compares the whole path anyway.
    const std::string_view path = r.template_path;
    uint64_t h = mix_string(kSeed + uint64_t(r.type) + path.size(),
                            path.substr(path.size() > 16 ? path.size() - 16 : 0));
    for (const auto& macro : *r.macros) {
      h = mix_string(h, macro.second);
      if (count < kInline) macros[count] = &macro;
      ++count;
    }
    for (const std::string& dir : *r.include_dirs) h = mix_string(h, dir);
    hash = finish(h);
  }
  const RequestView& request;
  const std::pair<const std::string, std::string>* macros[kInline];
  size_t count = 0;
  uint64_t hash = 0;
};

struct RequestTable::Entry {
  uint64_t hash;
  std::string template_path;
  std::vector<std::pair<std::string, std::string>> macros;  // contiguous, in map order
  KernelType type;
  std::vector<std::string> include_dirs;
  Hit hit;

  bool matches(const Probe& p) const {
    const RequestView& r = p.request;
    if (p.hash != hash || r.type != type || p.count != macros.size() ||
        r.include_dirs->size() != include_dirs.size() || !same(r.template_path, template_path)) {
      return false;
    }
    if (p.count <= Probe::kInline) {
      for (size_t i = 0; i < p.count; ++i) {
        if (!same(p.macros[i]->second, macros[i].second) || !same(p.macros[i]->first, macros[i].first)) {
          return false;
        }
      }
    } else {
      size_t i = 0;
      for (const auto& [name, value] : *r.macros) {
        if (!same(value, macros[i].second) || !same(name, macros[i].first)) return false;
        ++i;
      }
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
  const Probe probe(request);
  const Table* t = table_.load(std::memory_order_acquire);
  for (size_t i = probe.hash & t->mask;; i = (i + 1) & t->mask) {
    const Entry* e = t->slots[i].load(std::memory_order_acquire);
    if (!e) return nullptr;
    if (e->matches(probe)) return &e->hit;
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
  entries_.push_back(std::make_unique<Entry>(Entry{
      Probe(request).hash, std::string(request.template_path),
      {request.macros->begin(), request.macros->end()}, request.type, *request.include_dirs, hit}));
  tables_.back()->place(entries_.back().get());
  ++count_;
}

}  // namespace tg::jit
