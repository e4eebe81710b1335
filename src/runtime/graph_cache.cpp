#include "tilegraph/runtime/graph_cache.h"

namespace tg {

GraphCache::GraphCache(size_t capacity, size_t max_bytes) : capacity_(capacity), max_bytes_(max_bytes) {}

GraphCache::Lookup GraphCache::find(const Graph& graph, const GraphKey& key) {
  // Entries of one structure differ in addresses only; verifying each in full would cost a pass
  // over the graph per entry. The address hash picks the likely exact one to verify first, and
  // any other structural match is as good as another for re-binding.
  Lookup best;
  Iterator best_it;
  auto [begin, end] = index_.equal_range(key.structure);
  for (const bool likely_exact : {true, false}) {
    for (auto it = begin; it != end && !(best.entry && !likely_exact); ++it) {
      const CachedGraph& candidate = **it->second;
      if ((candidate.signature.recorded_key().addresses == key.addresses) != likely_exact) continue;
      const SignatureMatch match = candidate.signature.matches(graph);
      if (match > best.match) {
        best = {it->second->get(), match};
        best_it = it->second;
      }
      if (best.match == SignatureMatch::kExact) break;
    }
    if (best.match == SignatureMatch::kExact) break;
  }
  if (best.entry) lru_.splice(lru_.begin(), lru_, best_it);  // move to front, no allocation
  return best;
}

GraphCache::Lookup GraphCache::find_recent(const Graph& graph, std::optional<GraphKey>* key) const {
  if (lru_.empty()) return {};
  GraphKey same_structure_key;
  const SignatureMatch match = lru_.front()->signature.matches(graph, &same_structure_key);
  if (match == SignatureMatch::kExact) return {lru_.front().get(), match};
  if (match == SignatureMatch::kAddressesOnly && key) *key = same_structure_key;
  return {};
}

size_t GraphCache::insert(std::unique_ptr<CachedGraph> entry) {
  const uint64_t key = entry->signature.recorded_key().structure;
  bytes_ += entry->bytes();
  lru_.push_front(std::move(entry));
  index_.emplace(key, lru_.begin());
  return evict_to_limits();
}

void GraphCache::erase(CachedGraph* entry) {
  auto [begin, end] = index_.equal_range(entry->signature.recorded_key().structure);
  for (auto i = begin; i != end; ++i) {
    if (i->second->get() == entry) return unlink(i->second);
  }
}

void GraphCache::clear() {
  index_.clear();
  lru_.clear();
  bytes_ = 0;
}

size_t GraphCache::set_limits(size_t capacity, size_t max_bytes) {
  capacity_ = capacity;
  max_bytes_ = max_bytes;
  return evict_to_limits();
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
  auto [begin, end] = index_.equal_range((*it)->signature.recorded_key().structure);
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
