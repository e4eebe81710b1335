#pragma once
// The LRU cache of captured graphs (the CANN backend's ACL graph cache in llama.cpp, ggml_cann_graph_lru_cache), keyed
// by GraphSignature::key so a lookup is a hash probe plus an exact verification of the few candidates with that key —
// never a scan of the whole cache. Found entries move to the front; inserts go to the front and evict from the back
// past the count or byte bound.
#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <optional>
#include <unordered_map>

#include "tilegraph/runtime/backend.h"
#include "tilegraph/runtime/graph_signature.h"

namespace tg {

struct CachedGraph {
  GraphSignature signature;
  std::unique_ptr<CapturedGraph> captured;
  uint64_t replays = 0;
  uint64_t rebinds = 0;
  double capture_seconds = 0;   // capture executes the graph too: an upper bound of its eager time
  double replay_seconds = 0;    // all replays together
  bool prefill_shaped = false;  // is_prefill_graph() of the captured graph

  size_t bytes() const { return signature.bytes() + (captured ? captured->bytes() : 0); }
};

class GraphCache {
 public:
  struct Lookup {
    CachedGraph* entry = nullptr;  // null on a miss
    SignatureMatch match = SignatureMatch::kDifferent;
  };

  explicit GraphCache(size_t capacity = 12, size_t max_bytes = 0);
  GraphCache(const GraphCache&) = delete;
  GraphCache& operator=(const GraphCache&) = delete;

  // Finds an entry for `graph` (whose key is `key`), preferring an exact match over one that
  // needs re-binding, and moves it to the front. Verifies at most one entry in full unless
  // address hashes collide.
  Lookup find(const Graph& graph, const GraphKey& key);
  // The most recently used entry if `graph` matches it exactly, else nothing: one verification
  // pass and no key, for the steady state of a decode loop. If `graph` has that entry's
  // structure but other addresses, *key is set to its key, found in the same pass.
  Lookup find_recent(const Graph& graph, std::optional<GraphKey>* key = nullptr) const;
  // Adds an entry at the front; returns how many entries were evicted to make room.
  size_t insert(std::unique_ptr<CachedGraph> entry);
  // Removes one entry (e.g. a re-bind failed); `entry` must be in the cache.
  void erase(CachedGraph* entry);
  void clear();

  // Returns how many entries were evicted to meet the new limits.
  size_t set_limits(size_t capacity, size_t max_bytes);
  size_t capacity() const { return capacity_; }
  size_t max_bytes() const { return max_bytes_; }  // 0: no byte bound
  size_t size() const { return lru_.size(); }
  size_t bytes() const { return bytes_; }
  // Entries from most to least recently used (for tests and the CLI).
  const std::list<std::unique_ptr<CachedGraph>>& entries() const { return lru_; }

 private:
  using Iterator = std::list<std::unique_ptr<CachedGraph>>::iterator;
  size_t evict_to_limits();
  void unlink(Iterator it);

  size_t capacity_;
  size_t max_bytes_;
  size_t bytes_ = 0;
  std::list<std::unique_ptr<CachedGraph>> lru_;
  std::unordered_multimap<uint64_t, Iterator> index_;
};

}  // namespace tg
