#include "tilegraph/runtime/graph_signature.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstring>

#include "signature_records.h"
#include "tilegraph/core/error.h"

namespace tg {

namespace {

using signature_records::RecordView;

using Vec = uint64_t __attribute__((vector_size(16)));  // two words: SSE2 on x86-64, NEON on arm64
using Words = uint32_t __attribute__((vector_size(16)));
using Halves = uint16_t __attribute__((vector_size(16)));
inline Vec load_vec(const void* p) {
  Vec v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// Row n keeps the first n words of a record's op_params and clears the rest.
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

// The differences between kVecs pairs of words at `actual` and the first n_words words at
// `stored` followed by zeros.
template <int kVecs>
inline Vec masked_diff(const void* actual, const uint64_t* stored, uint64_t n_words) {
  const uint64_t* mask = kWordMasks.rows[n_words];
  Vec diff = {0, 0};
  for (int i = 0; i < kVecs; ++i) {
    diff |= load_vec(static_cast<const char*>(actual) + 16 * i) ^ (load_vec(stored + 2 * i) & load_vec(mask + 2 * i));
  }
  return diff;
}

// The record of a node (sources != nullptr) or a leaf.
void append_record(const Tensor& t, const NodeSources* sources, std::vector<uint64_t>& out) {
  const uint64_t type_op = type_op_word(t);
  const uint64_t ne_bits = uint64_t(t.ne[0]) | uint64_t(t.ne[1]) | uint64_t(t.ne[2]) | uint64_t(t.ne[3]);
  uint64_t flags = (type_op & kMetaBits ? kWide : 0) | (ne_bits >> 16 ? 0 : kSmallNe) |
                   (default_nb_diff(t) ? 0 : kDefaultNb);
  uint64_t params[kParamWords];
  uint64_t n_params = 0, n_sources = 0;
  if (sources) {
    flags |= (t.view_offs ? kViewOffs : 0) | (t.view_src ? kDerived : 0);
    for (int i = 0; i < kParamWords; ++i) {
      params[i] = load_word(t.op_params + 2 * i);
      if (params[i]) n_params = uint64_t(i) + 1;
    }
    n_sources = sources->count;
  }
  const uint64_t meta = flags << kFlagsShift | n_params << kParamWordsShift | n_sources << kSourceCountShift |
                        io_flags(t) << kIoFlagsShift;
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
  for (uint64_t i = 0; i < n_sources; i += 2) {
    const uint64_t high = i + 1 < n_sources ? uint32_t(sources->refs[i + 1]) : 0;
    out.push_back(uint64_t(uint32_t(sources->refs[i])) | high << 32);
  }
}

inline uint64_t mix(uint64_t h, uint64_t w) {
  h ^= w + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdull;
}

// One lane step of key(): a bijection of h for each w and of w for each h, so two sequences that
// differ in one word leave the lane different; xor-multiply is a 4-cycle chain where mix() is 7.
inline uint64_t step(uint64_t h, uint64_t w) { return (h ^ w) * 0x9e3779b97f4a7c15ull; }

// Compares `t` with the record at `e` and advances `e` past it; a node if sources != nullptr, else
// a leaf. Differences are OR-ed together and tested once.
template <bool kUpdateAddressSum>
inline bool match_record(const Tensor& t, const NodeSources* sources, uint64_t position, const uint64_t*& e,
                         uint64_t& moved, uint64_t& address_sum) {
  const uint64_t header = *e++;
  const uint64_t flags = header >> kFlagsShift;
  const uint64_t type_op = type_op_word(t);
  // A type or op of 256 or more has bits in kMetaBits, so it never equals a narrow header.
  uint64_t diff = (header & ~kMetaBits) ^ type_op;
  if (flags & kWide) [[unlikely]] diff = *e++ ^ type_op;
  diff |= io_flags_diff(header, t);
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
  if (sources) {
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
      if (address != recorded) [[unlikely]] address_sum += moved_address_delta(address, recorded, position);
    }
  }
  if (!sources) return (diff | vdiff[0] | vdiff[1]) == 0;
  const uint64_t n_params = header >> kParamWordsShift & 15;
  vdiff |= masked_diff<kParamWords / 2>(t.op_params, e, n_params);
  e += n_params;
  const uint64_t n_sources = header >> kSourceCountShift & 15;
  if (n_sources != sources->count) return false;
  for (uint64_t i = 0; i < n_sources; ++i) {
    uint32_t recorded;
    std::memcpy(&recorded, reinterpret_cast<const char*>(e) + 4 * i, sizeof recorded);
    diff |= recorded ^ uint32_t(sources->refs[i]);
  }
  e += (n_sources + 1) / 2;
  return (diff | vdiff[0] | vdiff[1]) == 0;
}

}  // namespace

namespace signature_records {

const std::array<TypeLayout, kTypeLayoutMask + 1> kTypeLayouts = [] {
  std::array<TypeLayout, kTypeLayoutMask + 1> layouts{};
  for (int i = 0; i < kDTypeCount; ++i) {
    const DTypeTraits& traits = dtype_traits(DType(i));
    // Inexact, a type's contiguous tensors would be recorded with their strides in full: correct,
    // only larger (test_graph_signature checks every type records the short form).
    layouts[size_t(i)] = {traits.type_size, (traits.type_size << kRowShift) / traits.block_size};
  }
  return layouts;
}();

template <bool kUpdateAddressSum>
SignatureMatch verify_portable(const Graph& graph, const RecordView& records, uint64_t* address_sum) {
  return walk_records<kUpdateAddressSum>(
      graph, records, address_sum,
      [](const Tensor& t, const NodeSources* sources, uint64_t position, const uint64_t*& e, uint64_t& moved,
         uint64_t& sum) { return match_record<kUpdateAddressSum>(t, sources, position, e, moved, sum); });
}

}  // namespace signature_records

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
  // Last tensor first: see walk_records.
  for (size_t j = leaf_count_; j-- > 0;) append_record(*graph.leafs()[j], nullptr, words_);
  for (size_t i = node_count_; i-- > 0;) {
    const std::span<const SourceRef> refs = graph.sources(i);
    const NodeSources sources{refs.data(), refs.size()};
    append_record(*graph.nodes()[i], &sources, words_);
  }
  words_.insert(words_.end(), kPadWords, 0);
}

bool GraphSignature::supports(SignatureIsa isa) {
  static const bool avx512 = [] {
    __builtin_cpu_init();  // this may run before libgcc's own initialisation
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
           __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq");
  }();
  return isa != SignatureIsa::kAvx512 || avx512;
}

SignatureMatch GraphSignature::matches(const Graph& graph, GraphKey* key, SignatureIsa isa) const {
  static const bool avx512_is_best = supports(SignatureIsa::kAvx512);
  if (isa == SignatureIsa::kBest) isa = avx512_is_best ? SignatureIsa::kAvx512 : SignatureIsa::kPortable;
  if (isa == SignatureIsa::kAvx512 && !supports(isa)) {
    throw Error("GraphSignature: this CPU lacks AVX-512 F/VL/BW/DQ");
  }
  const RecordView records{words_.data(), words_.data() + words_.size() - (words_.empty() ? 0 : kPadWords), node_count_, leaf_count_};
  uint64_t address_sum = address_sum_;
  const bool wide = isa == SignatureIsa::kAvx512;
  if (!key) {
    return wide ? signature_records::verify_avx512<false>(graph, records, &address_sum)
                : signature_records::verify_portable<false>(graph, records, &address_sum);
  }
  const SignatureMatch match = wide ? signature_records::verify_avx512<true>(graph, records, &address_sum)
                                    : signature_records::verify_portable<true>(graph, records, &address_sum);
  if (match != SignatureMatch::kDifferent) *key = {key_.structure, mix(address_sum, 0)};
  return match;
}

}  // namespace tg
