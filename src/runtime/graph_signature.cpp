#include "tilegraph/runtime/graph_signature.h"

#include <cstring>

namespace tg {

namespace {

// Nodes whose data pointer is derived from another tensor's (views and writes into a view).
bool address_is_derived(const Tensor& t) { return t.view_src != nullptr; }

constexpr size_t kNodeWords = 1 + 4 + 4 + kMaxOpParams / 2 + 1 + kMaxSrc / 2;
constexpr size_t kLeafWords = 1 + 4 + 4;

// Writes a node's structural words to `out` (kNodeWords of them).
void node_words(const Tensor& t, const std::array<SourceRef, kMaxSrc>& refs, uint64_t* out) {
  *out++ = uint64_t(uint32_t(t.op)) | uint64_t(uint32_t(t.type)) << 32;
  for (int i = 0; i < kMaxDims; ++i) *out++ = uint64_t(t.ne[i]);
  for (int i = 0; i < kMaxDims; ++i) *out++ = uint64_t(t.nb[i]);
  std::memcpy(out, t.op_params, sizeof t.op_params);
  out += kMaxOpParams / 2;
  *out++ = uint64_t(t.view_offs);
  std::memcpy(out, refs.data(), sizeof(SourceRef) * kMaxSrc);
}

void leaf_words(const Tensor& t, uint64_t* out) {
  *out++ = uint64_t(uint32_t(t.type)) | uint64_t(1) << 63;
  for (int i = 0; i < kMaxDims; ++i) *out++ = uint64_t(t.ne[i]);
  for (int i = 0; i < kMaxDims; ++i) *out++ = uint64_t(t.nb[i]);
}

// Whether node_words(t, refs) would equal `expected`, compared in place: the XORs of all words
// OR-ed together, one branch per node. Writing the words out and calling memcmp cost ~1.5x as
// much (a library call per node and a store-then-reload per word).
inline bool node_matches(const Tensor& t, const std::array<SourceRef, kMaxSrc>& refs, const uint64_t* expected) {
  static_assert(kMaxOpParams % 2 == 0 && kMaxSrc % 2 == 0, "op_params and refs are packed in pairs");
  const uint64_t* e = expected;
  uint64_t diff = *e++ ^ (uint64_t(uint32_t(t.op)) | uint64_t(uint32_t(t.type)) << 32);
  for (int i = 0; i < kMaxDims; ++i) diff |= *e++ ^ uint64_t(t.ne[i]);
  for (int i = 0; i < kMaxDims; ++i) diff |= *e++ ^ uint64_t(t.nb[i]);
  for (int i = 0; i < kMaxOpParams / 2; ++i) {
    uint64_t w;
    std::memcpy(&w, t.op_params + 2 * i, sizeof w);
    diff |= *e++ ^ w;
  }
  diff |= *e++ ^ uint64_t(t.view_offs);
  for (int i = 0; i < kMaxSrc / 2; ++i) {
    uint64_t w;
    std::memcpy(&w, refs.data() + 2 * i, sizeof w);
    diff |= *e++ ^ w;
  }
  return diff == 0;
}

// Tensors are scattered objects several cache lines long: fetching a few nodes ahead hides most
// of the misses of the in-place comparison.
constexpr size_t kPrefetchAhead = 4;
inline void prefetch_tensor(const Tensor* t) {
  const char* p = reinterpret_cast<const char*>(t);
  for (size_t line = 0; line < sizeof(Tensor); line += 64) __builtin_prefetch(p + line);
}

inline bool leaf_matches(const Tensor& t, const uint64_t* expected) {
  const uint64_t* e = expected;
  uint64_t diff = *e++ ^ (uint64_t(uint32_t(t.type)) | uint64_t(1) << 63);
  for (int i = 0; i < kMaxDims; ++i) diff |= *e++ ^ uint64_t(t.ne[i]);
  for (int i = 0; i < kMaxDims; ++i) diff |= *e++ ^ uint64_t(t.nb[i]);
  return diff == 0;
}

inline uint64_t mix(uint64_t h, uint64_t w) {
  h ^= w + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdull;
}

// One lane step of key(): a bijection of h for each w and of w for each h, so two sequences that
// differ in one word leave the lane different; xor-multiply is a 4-cycle chain where mix() is 7.
inline uint64_t step(uint64_t h, uint64_t w) { return (h ^ w) * 0x9e3779b97f4a7c15ull; }

}  // namespace

GraphKey GraphSignature::key(const Graph& graph) {
  // Four independent lanes so the multiplies pipeline; this runs on every graph-mode compute.
  uint64_t lane[4] = {graph.size(), graph.leafs().size(), 0x243f6a8885a308d3ull, 0x13198a2e03707344ull};
  uint64_t addresses = 0x452821e638d01377ull;
  const std::vector<Tensor*>& nodes = graph.nodes();
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Tensor* t = nodes[i];
    if (i + kPrefetchAhead < nodes.size()) __builtin_prefetch(nodes[i + kPrefetchAhead]);
    lane[0] = step(lane[0], uint64_t(uint32_t(t->op)) | uint64_t(uint32_t(t->type)) << 32);
    lane[1] = step(lane[1], uint64_t(t->ne[0]) ^ uint64_t(t->ne[3]) << 40);
    lane[2] = step(lane[2], uint64_t(t->ne[1]));
    lane[3] = step(lane[3], uint64_t(t->ne[2]));
    if (!address_is_derived(*t)) addresses = step(addresses, reinterpret_cast<uintptr_t>(t->data));
  }
  for (const Tensor* leaf : graph.leafs()) addresses = step(addresses, reinterpret_cast<uintptr_t>(leaf->data));
  return {mix(mix(lane[0], lane[1]), mix(lane[2], lane[3])), mix(addresses, 0)};
}

void GraphSignature::record(const Graph& graph) {
  key_ = key(graph);
  node_count_ = graph.size();
  structure_.resize(graph.size() * kNodeWords + graph.leafs().size() * kLeafWords);
  addresses_.clear();
  uint64_t* out = structure_.data();
  for (size_t i = 0; i < graph.size(); ++i) {
    const Tensor& t = *graph.nodes()[i];
    node_words(t, graph.src_refs()[i], out);
    out += kNodeWords;
    if (!address_is_derived(t)) addresses_.push_back(t.data);
  }
  for (const Tensor* leaf : graph.leafs()) {
    leaf_words(*leaf, out);
    out += kLeafWords;
    addresses_.push_back(leaf->data);
  }
}

SignatureMatch GraphSignature::matches(const Graph& graph) const {
  if (graph.size() != node_count_ ||
      structure_.size() != graph.size() * kNodeWords + graph.leafs().size() * kLeafWords) {
    return SignatureMatch::kDifferent;
  }
  const uint64_t* expected = structure_.data();
  const void* const* address = addresses_.data();
  const void* const* const address_end = address + addresses_.size();
  bool moved = false;
  const size_t n_nodes = graph.size();
  for (size_t i = 0; i < n_nodes; ++i) {
    const Tensor& t = *graph.nodes()[i];
    if (i + kPrefetchAhead < n_nodes) prefetch_tensor(graph.nodes()[i + kPrefetchAhead]);
    if (!node_matches(t, graph.src_refs()[i], expected)) return SignatureMatch::kDifferent;
    expected += kNodeWords;
    if (!address_is_derived(t)) {
      // A node that used to own memory and now is a view (or back) changes the address list.
      if (address == address_end) return SignatureMatch::kDifferent;
      moved |= *address++ != t.data;
    }
  }
  for (const Tensor* leaf : graph.leafs()) {
    if (!leaf_matches(*leaf, expected)) return SignatureMatch::kDifferent;
    expected += kLeafWords;
    if (address == address_end) return SignatureMatch::kDifferent;
    moved |= *address++ != leaf->data;
  }
  if (address != address_end) return SignatureMatch::kDifferent;
  return moved ? SignatureMatch::kAddressesOnly : SignatureMatch::kExact;
}

}  // namespace tg
