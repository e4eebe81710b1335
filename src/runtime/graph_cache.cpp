#include "tilegraph/runtime/graph_cache.h"

namespace tg {

GraphCache::GraphCache(size_t capacity, size_t max_bytes) : capacity_(capacity), max_bytes_(max_bytes) {}

GraphCache::Lookup GraphCache::find(const Graph& graph, uint64_t key) {
  Lookup best;
  Iterator best_it;
  auto [begin, end] = index_.equal_range(key);
  for (auto it = begin; it != end; ++it) {
    const SignatureMatch match = (*it->second)->signature.matches(graph);
    if (match > best.match) {
      best = {it->second->get(), match};
      best_it = it->second;
      if (match == SignatureMatch::kExact) break;
    }
  }
  if (best.entry) lru_.splice(lru_.begin(), lru_, best_it);  // move to front, no allocation
  return best;
}

size_t GraphCache::insert(std::unique_ptr<CachedGraph> entry) {
  const uint64_t key = entry->signature.recorded_key();
  bytes_ += entry->bytes();
  lru_.push_front(std::move(entry));
  index_.emplace(key, lru_.begin());
  return evict_to_limits();
}

void GraphCache::erase(CachedGraph* entry) {
  for (Iterator it = lru_.begin(); it != lru_.end(); ++it) {
    if (it->get() == entry) {
      unlink(it);
      return;
    }
  }
}

void GraphCache::clear() {
  index_.clear();
  lru_.clear();
  bytes_ = 0;
}

void GraphCache::set_limits(size_t capacity, size_t max_bytes) {
  capacity_ = capacity;
  max_bytes_ = max_bytes;
  evict_to_limits();
}

size_t GraphCache::evict_to_limits() {
  size_t evicted = 0;
  // The newest entry stays even if it alone exceeds the byte bound: it is about to be replayed.
  while (!lru_.empty() && (lru_.size() > capacity_ || (max_bytes_ && bytes_ > max_bytes_ && lru_.size() > 1))) {
    unlink(std::prev(lru_.end()));
    ++evicted;
  }
  return evicted;
}

void GraphCache::unlink(Iterator it) {
  auto [begin, end] = index_.equal_range((*it)->signature.recorded_key());
  for (auto i = begin; i != end; ++i) {
    if (i->second == it) {
      index_.erase(i);
      break;
    }
  }
  bytes_ -= (*it)->bytes();
  lru_.erase(it);  // releases the captured graph's resources
}

}  // namespace tg
