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

inline uint64_t mix(uint64_t h, uint64_t w) {
  h ^= w + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdull;
}

}  // namespace

uint64_t GraphSignature::key(const Graph& graph) {
  // Four independent lanes so the multiplies pipeline; this runs on every graph-mode compute.
  uint64_t lane[4] = {graph.size(), graph.leafs().size(), 0x243f6a8885a308d3ull, 0x13198a2e03707344ull};
  for (const Tensor* t : graph.nodes()) {
    lane[0] = mix(lane[0], uint64_t(uint32_t(t->op)) | uint64_t(uint32_t(t->type)) << 32);
    lane[1] = mix(lane[1], uint64_t(t->ne[0]) ^ uint64_t(t->ne[3]) << 40);
    lane[2] = mix(lane[2], uint64_t(t->ne[1]));
    lane[3] = mix(lane[3], uint64_t(t->ne[2]));
  }
  return mix(mix(lane[0], lane[1]), mix(lane[2], lane[3]));
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
  uint64_t words[kNodeWords];
  const uint64_t* expected = structure_.data();
  const void* const* address = addresses_.data();
  const void* const* const address_end = address + addresses_.size();
  bool moved = false;
  for (size_t i = 0; i < graph.size(); ++i) {
    const Tensor& t = *graph.nodes()[i];
    node_words(t, graph.src_refs()[i], words);
    if (std::memcmp(words, expected, sizeof words) != 0) return SignatureMatch::kDifferent;
    expected += kNodeWords;
    if (!address_is_derived(t)) {
      // A node that used to own memory and now is a view (or back) changes the address list.
      if (address == address_end) return SignatureMatch::kDifferent;
      moved |= *address++ != t.data;
    }
  }
  for (const Tensor* leaf : graph.leafs()) {
    leaf_words(*leaf, words);
    if (std::memcmp(words, expected, kLeafWords * sizeof(uint64_t)) != 0) return SignatureMatch::kDifferent;
    expected += kLeafWords;
    if (address == address_end) return SignatureMatch::kDifferent;
    moved |= *address++ != leaf->data;
  }
  if (address != address_end) return SignatureMatch::kDifferent;
  return moved ? SignatureMatch::kAddressesOnly : SignatureMatch::kExact;
}

}  // namespace tg
