#include "tilegraph/runtime/graph_signature.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstring>

namespace tg {

namespace {

// A record is one header word and then only the words its flags call for:
//   header     the tensor's type and op as one word (type | op << 32), with the flags and counts
//              in bits 8-31, which are zero for every type and op below 256; kWide marks a type
//              or op that does not fit, stored in full in the next word instead
//   ne         one word of four 16-bit fields (kSmallNe), else four words
//   nb         four words, unless nb is the contiguous layout of ne and type (kDefaultNb)
//   view_offs  one word if it is not 0 (kViewOffs)
//   address    the data pointer, unless the node is a view (kDerived) — always for a leaf
//   op_params  pairs of int32 up to the last non-zero pair (the rest are zero)
//   sources    pairs of SourceRefs XOR kNoSourcePair up to the last pair with a source
// (leaves have no view_offs, op_params or sources). The verification reads the flags from the
// record and checks that what each one implies holds for the tensor (ne fits 16 bits, nb is
// the default, the omitted words are zero...), so a record matches exactly the tensors whose
// recorded properties are all equal: the encoding is shorter, not lossy. A 10,000-node chain
// takes ~35 bytes per node instead of 184, which is most of what the verification has to read.
constexpr uint64_t kMetaBits = 0x00000000ffffff00ull;
constexpr int kFlagsShift = 8;
constexpr uint64_t kWide = 1 << 0;
constexpr uint64_t kSmallNe = 1 << 1;
constexpr uint64_t kDefaultNb = 1 << 2;
constexpr uint64_t kViewOffs = 1 << 3;
constexpr int kDerivedBit = 4;
constexpr uint64_t kDerived = 1 << kDerivedBit;
constexpr int kParamWordsShift = 16;
constexpr int kSourceWordsShift = 20;
constexpr int kParamWords = kMaxOpParams / 2;
constexpr int kSourceWords = kMaxSrc / 2;
static_assert(kMaxOpParams % 4 == 0 && kMaxSrc % 4 == 2, "op_params: whole vectors; sources: vectors and one word");
static_assert(kParamWords < 16 && kSourceWords < 16, "the counts have four bits each");
static_assert(offsetof(Tensor, op) == offsetof(Tensor, type) + 4 && sizeof(DType) == 4 && sizeof(Op) == 4,
              "type and op are read as one word");
// The verification reads a fixed number of op_params/source words and masks off the ones a record
// does not have; the last record may end this close to the end of the stored words.
constexpr size_t kPadWords = 8;
static_assert(kPadWords >= size_t(kParamWords) && kPadWords >= size_t(kSourceWords));

using Vec = uint64_t __attribute__((vector_size(16)));  // two words: SSE2 on x86-64, NEON on arm64
using Words = uint32_t __attribute__((vector_size(16)));
using Halves = uint16_t __attribute__((vector_size(16)));
inline Vec load_vec(const void* p) {
  Vec v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline uint64_t load_word(const void* p) {
  uint64_t w;
  std::memcpy(&w, p, sizeof w);
  return w;
}

const uint64_t kNoSourcePair = [] {
  const int32_t pair[2] = {kNoSource, kNoSource};
  return load_word(pair);
}();

// Row n keeps the first n words of a record's op_params or sources and clears the rest.
struct alignas(16) WordMasks {
  uint64_t rows[kPadWords + 1][kPadWords];
};
constexpr WordMasks kWordMasks = [] {
  WordMasks m{};
  for (size_t n = 0; n <= kPadWords; ++n) {
    for (size_t i = 0; i < kPadWords; ++i) m.rows[n][i] = i < n ? ~uint64_t(0) : 0;
  }
  return m;
}();

// The contiguous layout of each type, indexed by the type's low bits: bytes per block, and
// bytes per block << kRowShift / elements per block, so that a row takes (ne0 * row_factor) >>
// kRowShift bytes — exact for whole blocks, and a multiply and a constant shift instead of a
// division. The "contiguous layout" only has to be the same function of ne and type when
// recording and verifying (nb is compared either way), so values outside the enum may share
// an entry.
constexpr int kRowShift = 5;
struct TypeLayout {
  uint64_t block_bytes = 0;
  uint64_t row_factor = 0;
};
constexpr uint32_t kTypeLayoutMask = std::bit_ceil(uint32_t(kDTypeCount)) - 1;
const std::array<TypeLayout, kTypeLayoutMask + 1> kTypeLayouts = [] {
  std::array<TypeLayout, kTypeLayoutMask + 1> layouts{};
  for (int i = 0; i < kDTypeCount; ++i) {
    const DTypeTraits& traits = dtype_traits(DType(i));
    layouts[size_t(i)] = {traits.type_size, (traits.type_size << kRowShift) / traits.block_size};
  }
  return layouts;
}();

// Zero when nb is the contiguous layout of t's ne and type.
inline uint64_t default_nb_diff(const Tensor& t) {
  const TypeLayout& layout = kTypeLayouts[uint32_t(t.type) & kTypeLayoutMask];
  const uint64_t nb1 = (uint64_t(t.ne[0]) * layout.row_factor) >> kRowShift;
  const uint64_t nb2 = nb1 * uint64_t(t.ne[1]);
  const uint64_t nb3 = nb2 * uint64_t(t.ne[2]);
  return (t.nb[0] ^ layout.block_bytes) | (t.nb[1] ^ nb1) | (t.nb[2] ^ nb2) | (t.nb[3] ^ nb3);
}

inline uint64_t type_op_word(const Tensor& t) { return load_word(&t.type); }

// The differences between kVecs pairs of words at `actual` (XOR `flip`) and the first n_words
// words at `stored` followed by zeros.
template <int kVecs>
inline Vec masked_diff(const void* actual, const uint64_t* stored, uint64_t n_words, Vec flip) {
  const uint64_t* mask = kWordMasks.rows[n_words];
  Vec diff = {0, 0};
  for (int i = 0; i < kVecs; ++i) {
    diff |= load_vec(static_cast<const char*>(actual) + 16 * i) ^ flip ^ (load_vec(stored + 2 * i) & load_vec(mask + 2 * i));
  }
  return diff;
}

// The record of a node (refs != nullptr) or a leaf.
void append_record(const Tensor& t, const SourceRef* refs, std::vector<uint64_t>& out) {
  const uint64_t type_op = type_op_word(t);
  const uint64_t ne_bits = uint64_t(t.ne[0]) | uint64_t(t.ne[1]) | uint64_t(t.ne[2]) | uint64_t(t.ne[3]);
  uint64_t flags = (type_op & kMetaBits ? kWide : 0) | (ne_bits >> 16 ? 0 : kSmallNe) |
                   (default_nb_diff(t) ? 0 : kDefaultNb);
  uint64_t params[kParamWords], sources[kSourceWords];
  uint64_t n_params = 0, n_sources = 0;
  if (refs) {
    flags |= (t.view_offs ? kViewOffs : 0) | (t.view_src ? kDerived : 0);
    for (int i = 0; i < kParamWords; ++i) {
      params[i] = load_word(t.op_params + 2 * i);
      if (params[i]) n_params = uint64_t(i) + 1;
    }
    for (int i = 0; i < kSourceWords; ++i) {
      sources[i] = load_word(refs + 2 * i) ^ kNoSourcePair;
      if (sources[i]) n_sources = uint64_t(i) + 1;
    }
  }
  const uint64_t meta = flags << kFlagsShift | n_params << kParamWordsShift | n_sources << kSourceWordsShift;
  out.push_back((flags & kWide ? 0 : type_op) | meta);
  if (flags & kWide) out.push_back(type_op);
  if (flags & kSmallNe) {
    out.push_back(uint64_t(t.ne[0]) | uint64_t(t.ne[1]) << 16 | uint64_t(t.ne[2]) << 32 | uint64_t(t.ne[3]) << 48);
  } else {
    for (int i = 0; i < kMaxDims; ++i) out.push_back(uint64_t(t.ne[i]));
  }
  if (!(flags & kDefaultNb)) {
    for (int i = 0; i < kMaxDims; ++i) out.push_back(t.nb[i]);
  }
  if (flags & kViewOffs) out.push_back(t.view_offs);
  if (!(flags & kDerived)) out.push_back(reinterpret_cast<uintptr_t>(t.data));
  out.insert(out.end(), params, params + n_params);
  out.insert(out.end(), sources, sources + n_sources);
}

inline uint64_t mix(uint64_t h, uint64_t w) {
  h ^= w + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdull;
}

// One lane step of key(): a bijection of h for each w and of w for each h, so two sequences that
// differ in one word leave the lane different; xor-multiply is a 4-cycle chain where mix() is 7.
inline uint64_t step(uint64_t h, uint64_t w) { return (h ^ w) * 0x9e3779b97f4a7c15ull; }

// The address hash is a sum of one term per address, salted by the position of its tensor (node
// index, or node count + leaf index): no dependency chain between nodes, and a graph whose
// addresses moved gets its hash from the recorded one by swapping the terms of the addresses that
// differ. It only picks the entry to verify first among entries of one structure.
constexpr uint64_t kAddressSeed = 0x452821e638d01377ull;
constexpr uint64_t kPositionSalt = 0x13198a2e03707344ull;
// `salt` is position * kPositionSalt (key() keeps it as a running sum: no multiply per node).
inline uint64_t address_term(uint64_t address, uint64_t salt) { return (address ^ salt) * 0xff51afd7ed558ccdull; }

// Compares `t` with the record at `e` and advances `e` past it; a node if refs != nullptr, else
// a leaf. Differences are OR-ed together and tested once.
template <bool kUpdateAddressSum>
inline bool match_record(const Tensor& t, const SourceRef* refs, uint64_t position, const uint64_t*& e,
                         uint64_t& moved, uint64_t& address_sum) {
  const uint64_t header = *e++;
  const uint64_t flags = header >> kFlagsShift;
  const uint64_t type_op = type_op_word(t);
  // A type or op of 256 or more has bits in kMetaBits, so it never equals a narrow header.
  uint64_t diff = (header & ~kMetaBits) ^ type_op;
  if (flags & kWide) [[unlikely]] diff = *e++ ^ type_op;
  Vec vdiff;
  if (flags & kSmallNe) [[likely]] {
    // Widen the four 16-bit fields to words: an ne of 65536 or more never equals one of them.
    // (interleaving with zeros twice: punpcklwd, punpckldq/punpckhdq on SSE2).
    const Halves packed = Halves(Vec{*e++, 0});
    const Words widened = Words(__builtin_shuffle(packed, Halves{}, Halves{0, 8, 1, 9, 2, 10, 3, 11}));
    vdiff = Vec(__builtin_shuffle(widened, Words{}, Words{0, 4, 1, 5})) ^ load_vec(t.ne);
    vdiff |= Vec(__builtin_shuffle(widened, Words{}, Words{2, 6, 3, 7})) ^ load_vec(t.ne + 2);
  } else {
    vdiff = (load_vec(e) ^ load_vec(t.ne)) | (load_vec(e + 2) ^ load_vec(t.ne + 2));
    e += kMaxDims;
  }
  if (flags & kDefaultNb) [[likely]] {
    diff |= default_nb_diff(t);
  } else {
    vdiff |= (load_vec(e) ^ load_vec(t.nb)) | (load_vec(e + 2) ^ load_vec(t.nb + 2));
    e += kMaxDims;
  }
  bool owner = true;
  if (refs) {
    if (flags & kViewOffs) [[unlikely]] {
      diff |= *e++ ^ t.view_offs;
    } else {
      diff |= t.view_offs;
    }
    diff |= (flags >> kDerivedBit & 1) ^ uint64_t(t.view_src != nullptr);
    owner = !(flags & kDerived);
  }
  if (owner) {
    const uint64_t address = reinterpret_cast<uintptr_t>(t.data), recorded = *e++;
    moved |= address ^ recorded;
    if constexpr (kUpdateAddressSum) {
      if (address != recorded) [[unlikely]] {
        const uint64_t salt = position * kPositionSalt;
        address_sum += address_term(address, salt) - address_term(recorded, salt);
      }
    }
  }
  if (!refs) return (diff | vdiff[0] | vdiff[1]) == 0;
  const uint64_t n_params = header >> kParamWordsShift & 15;
  vdiff |= masked_diff<kParamWords / 2>(t.op_params, e, n_params, Vec{0, 0});
  e += n_params;
  const uint64_t n_sources = header >> kSourceWordsShift & 15;
  vdiff |= masked_diff<kSourceWords / 2>(refs, e, n_sources, Vec{kNoSourcePair, kNoSourcePair});
  diff |= load_word(refs + kMaxSrc - 2) ^ kNoSourcePair ^ (e[kSourceWords - 1] & kWordMasks.rows[n_sources][kSourceWords - 1]);
  e += n_sources;
  return (diff | vdiff[0] | vdiff[1]) == 0;
}

// Tensors are scattered objects: fetching the lines the verification reads (Tensor keeps them
// in its first three) several nodes ahead hides most of the misses.
constexpr size_t kPrefetchAhead = 8;
static_assert(alignof(Tensor) == 64, "Tensor starts on a cache line");
static_assert(offsetof(Tensor, view_offs) + sizeof(size_t) <= 64 && offsetof(Tensor, ne) + sizeof(Tensor::ne) <= 64,
              "key() reads one line per node");
static_assert(offsetof(Tensor, nb) + sizeof(Tensor::nb) <= 192 && offsetof(Tensor, op_params) + sizeof(Tensor::op_params) <= 192,
              "the verification reads three lines per node");
inline void prefetch_compared_lines(const Tensor* t) {
  const char* p = reinterpret_cast<const char*>(t);
  __builtin_prefetch(p);
  __builtin_prefetch(p + 64);
  __builtin_prefetch(p + 128);
}

}  // namespace

GraphKey GraphSignature::key(const Graph& graph, uint64_t* address_sum) {
  // Four independent lanes so the multiplies pipeline; this runs on every graph-mode compute.
  uint64_t lane[4] = {graph.size(), graph.leafs().size(), 0x243f6a8885a308d3ull, 0x13198a2e03707344ull};
  uint64_t addresses = kAddressSeed, salt = 0;
  const std::vector<Tensor*>& nodes = graph.nodes();
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Tensor* t = nodes[i];
    if (i + kPrefetchAhead < nodes.size()) __builtin_prefetch(nodes[i + kPrefetchAhead]);
    lane[0] = step(lane[0], uint64_t(uint32_t(t->op)) | uint64_t(uint32_t(t->type)) << 32);
    lane[1] = step(lane[1], uint64_t(t->ne[0]) ^ uint64_t(t->ne[3]) << 40);
    lane[2] = step(lane[2], uint64_t(t->ne[1]));
    lane[3] = step(lane[3], uint64_t(t->ne[2]));
    if (!t->view_src) addresses += address_term(reinterpret_cast<uintptr_t>(t->data), salt);
    salt += kPositionSalt;
  }
  for (const Tensor* leaf : graph.leafs()) {
    addresses += address_term(reinterpret_cast<uintptr_t>(leaf->data), salt);
    salt += kPositionSalt;
  }
  if (address_sum) *address_sum = addresses;
  return {mix(mix(lane[0], lane[1]), mix(lane[2], lane[3])), mix(addresses, 0)};
}

void GraphSignature::record(const Graph& graph) {
  key_ = key(graph, &address_sum_);
  node_count_ = graph.size();
  leaf_count_ = graph.leafs().size();
  words_.clear();  // a re-bind records the same structure again: the capacity suffices
  for (size_t i = 0; i < graph.size(); ++i) append_record(*graph.nodes()[i], graph.src_refs()[i].data(), words_);
  for (const Tensor* leaf : graph.leafs()) append_record(*leaf, nullptr, words_);
  words_.insert(words_.end(), kPadWords, 0);
}

template <bool kUpdateAddressSum>
SignatureMatch GraphSignature::verify(const Graph& graph, uint64_t* address_sum) const {
  const size_t n_nodes = graph.size();
  if (n_nodes != node_count_ || graph.leafs().size() != leaf_count_ || words_.empty()) {
    return SignatureMatch::kDifferent;
  }
  const uint64_t* e = words_.data();
  uint64_t moved = 0;
  Tensor* const* nodes = graph.nodes().data();
  const std::array<SourceRef, kMaxSrc>* refs = graph.src_refs().data();
  const auto match_node = [&](size_t i) {
    return match_record<kUpdateAddressSum>(*nodes[i], refs[i].data(), i, e, moved, *address_sum);
  };
  size_t i = 0;
  for (; i + kPrefetchAhead < n_nodes; ++i) {
    prefetch_compared_lines(nodes[i + kPrefetchAhead]);
    if (!match_node(i)) return SignatureMatch::kDifferent;
  }
  for (; i < n_nodes; ++i) {
    if (!match_node(i)) return SignatureMatch::kDifferent;
  }
  for (size_t j = 0; j < leaf_count_; ++j) {
    if (!match_record<kUpdateAddressSum>(*graph.leafs()[j], nullptr, n_nodes + j, e, moved, *address_sum)) {
      return SignatureMatch::kDifferent;
    }
  }
  if (e != words_.data() + words_.size() - kPadWords) return SignatureMatch::kDifferent;
  return moved ? SignatureMatch::kAddressesOnly : SignatureMatch::kExact;
}

SignatureMatch GraphSignature::matches(const Graph& graph, GraphKey* key) const {
  uint64_t address_sum = address_sum_;
  if (!key) return verify<false>(graph, &address_sum);
  const SignatureMatch match = verify<true>(graph, &address_sum);
  if (match != SignatureMatch::kDifferent) *key = {key_.structure, mix(address_sum, 0)};
  return match;
}

}  // namespace tg
