#pragma once
// GraphSignature's record format (graph_signature.cpp writes records and checks them with
// portable code, graph_signature_avx512.cpp checks them with AVX-512) and the walk over a graph
// that both checks share. The helpers live in an unnamed namespace: the AVX-512 file is compiled
// for AVX-512, and the linker must not merge its copies with the portable file's.
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "tilegraph/runtime/graph_signature.h"

namespace tg {

namespace signature_records {

// The recorded words of a graph (without the padding after them) and its sizes.
struct RecordView {
  const uint64_t* begin;
  const uint64_t* end;
  size_t node_count;
  size_t leaf_count;
};

// Exact verification of `graph` against `records`; with kUpdateAddressSum, *address_sum (the
// recorded raw address sum) is updated for every address that differs.
template <bool kUpdateAddressSum>
SignatureMatch verify_portable(const Graph& graph, const RecordView& records, uint64_t* address_sum);
template <bool kUpdateAddressSum>
SignatureMatch verify_avx512(const Graph& graph, const RecordView& records, uint64_t* address_sum);

// The contiguous layout of each type, indexed by the type's low bits: bytes per block, and
// bytes per block << kRowShift / elements per block, so that a row takes (ne0 * row_factor) >>
// kRowShift bytes — exact for whole blocks, and a multiply and a constant shift instead of a
// division. The "contiguous layout" only has to be the same function of ne and type when
// recording and verifying (nb is compared either way), so values outside the enum may share
// an entry. The shift makes it exact for every type: 7 bits cover q6_K's 210 bytes per 256
// elements (105 / 128 per element); rows up to 2^57 elements stay within 64 bits.
constexpr int kRowShift = 7;
struct TypeLayout {
  uint64_t block_bytes = 0;
  uint64_t row_factor = 0;
};
constexpr uint32_t kTypeLayoutMask = std::bit_ceil(uint32_t(kDTypeCount)) - 1;
// Outside the unnamed namespace and defined once, in graph_signature.cpp: it is filled at start-up
// (dtype_traits is not constexpr), and a copy per file would be filled in graph_signature_avx512.cpp
// too, by AVX-512 code that runs on every CPU.
extern const std::array<TypeLayout, kTypeLayoutMask + 1> kTypeLayouts;

}  // namespace signature_records

namespace {

// A node's sources as the walk hands them to a record check (a leaf gets none: nullptr).
struct NodeSources {
  const SourceRef* refs;
  uint64_t count;
};

// A record is one header word and then only the words its flags call for:
//   header     the tensor's type and op as one word (type | op << 32), with the flags, counts
//              and the tensor's input/output flags in bits 8-31, which are zero for every type
//              and op below 256; kWide marks a type or op that does not fit, stored in full in
//              the next word instead
//   ne         one word of four 16-bit fields (kSmallNe), else four words
//   nb         four words, unless nb is the contiguous layout of ne and type (kDefaultNb)
//   view_offs  one word if it is not 0 (kViewOffs)
//   address    the data pointer, unless the node is a view (kDerived) — always for a leaf
//   op_params  pairs of int32 up to the last non-zero pair (the rest are zero)
//   sources    the node's Graph::sources() (a count of up to kMaxSrc in the header), two to a
//              word; an odd count leaves the last word's upper half zero
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
constexpr int kSourceCountShift = 20;
// Whether the tensor is a graph input or output (its kFlagInput and kFlagOutput) in two bits: a
// backend's captured graph may depend on it (the CPU's fused chains never absorb one).
constexpr int kIoFlagsShift = 24;
constexpr int kParamWords = kMaxOpParams / 2;
static_assert(kMaxOpParams % 4 == 0, "op_params: whole vectors");
static_assert(kParamWords < 16 && kMaxSrc < 16, "the counts have four bits each");
static_assert(offsetof(Tensor, op) == offsetof(Tensor, type) + 4 && sizeof(DType) == 4 && sizeof(Op) == 4,
              "type and op are read as one word");
// The portable verification reads a fixed number of op_params words and masks off the ones a
// record does not have; the last record may end this close to the end of the stored words.
constexpr size_t kPadWords = 8;
static_assert(kPadWords >= size_t(kParamWords));

inline uint64_t load_word(const void* p) {
  uint64_t w;
  std::memcpy(&w, p, sizeof w);
  return w;
}

using signature_records::kRowShift;
using signature_records::kTypeLayoutMask;
using signature_records::kTypeLayouts;
using signature_records::TypeLayout;


// Zero when nb is the contiguous layout of t's ne and type.
inline uint64_t default_nb_diff(const Tensor& t) {
  const TypeLayout& layout = kTypeLayouts[uint32_t(t.type) & kTypeLayoutMask];
  const uint64_t nb1 = (uint64_t(t.ne[0]) * layout.row_factor) >> kRowShift;
  const uint64_t nb2 = nb1 * uint64_t(t.ne[1]);
  const uint64_t nb3 = nb2 * uint64_t(t.ne[2]);
  return (t.nb[0] ^ layout.block_bytes) | (t.nb[1] ^ nb1) | (t.nb[2] ^ nb2) | (t.nb[3] ^ nb3);
}

inline uint64_t type_op_word(const Tensor& t) { return load_word(&t.type); }

static_assert(kFlagInput == 2 && kFlagOutput == 4, "io_flags takes bits 1 and 2");
inline uint64_t io_flags(const Tensor& t) { return (t.flags & (kFlagInput | kFlagOutput)) >> 1; }
// Zero when the header's input/output flags are the tensor's.
inline uint64_t io_flags_diff(uint64_t header, const Tensor& t) { return (header >> kIoFlagsShift & 3) ^ io_flags(t); }

// The address hash is a sum of one term per address, salted by the position of its tensor (node
// index, or node count + leaf index): no dependency chain between nodes, and a graph whose
// addresses moved gets its hash from the recorded one by swapping the terms of the addresses that
// differ. It only picks the entry to verify first among entries of one structure.
constexpr uint64_t kAddressSeed = 0x452821e638d01377ull;
constexpr uint64_t kPositionSalt = 0x13198a2e03707344ull;
// `salt` is position * kPositionSalt (key() keeps it as a running sum: no multiply per node).
inline uint64_t address_term(uint64_t address, uint64_t salt) { return (address ^ salt) * 0xff51afd7ed558ccdull; }
// What the address sum changes by when the address at `position` moved from `recorded`. Out of
// line: inlined into the verification loop, the compiler kept position * kPositionSalt as a
// running sum and ran out of registers: a 1k-node check with the key took ~20% longer.
[[gnu::noinline]] inline uint64_t moved_address_delta(uint64_t address, uint64_t recorded, uint64_t position) {
  const uint64_t salt = position * kPositionSalt;
  return address_term(address, salt) - address_term(recorded, salt);
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

// Checks every leaf and then every node, each in reverse order, with `match_record(tensor,
// NodeSources* or nullptr for a leaf, position, e, moved, address_sum)`, which compares one record at `e` and advances
// `e` past it. Reverse order, because a lookup that misses the most recent entry runs key()
// first, which reads the tensors from the first node to the last leaf: the last ones it read
// are still in the core's L2 cache when the verification starts from them.
template <bool kUpdateAddressSum, class MatchRecord>
inline SignatureMatch walk_records(const Graph& graph, const signature_records::RecordView& records,
                                   uint64_t* address_sum, MatchRecord match_record) {
  const size_t n_nodes = graph.size();
  if (n_nodes != records.node_count || graph.leafs().size() != records.leaf_count || records.begin == records.end) {
    return SignatureMatch::kDifferent;
  }
  const uint64_t* e = records.begin;
  uint64_t moved = 0;
  for (size_t j = records.leaf_count; j-- > 0;) {
    if (!match_record(*graph.leafs()[j], nullptr, n_nodes + j, e, moved, *address_sum)) return SignatureMatch::kDifferent;
  }
  Tensor* const* nodes = graph.nodes().data();
  const auto match_node = [&](size_t index) {
    const std::span<const SourceRef> refs = graph.sources(index);
    const NodeSources sources{refs.data(), refs.size()};
    return match_record(*nodes[index], &sources, index, e, moved, *address_sum);
  };
  size_t i = n_nodes;
  for (; i > kPrefetchAhead; --i) {
    prefetch_compared_lines(nodes[i - 1 - kPrefetchAhead]);
    if (!match_node(i - 1)) return SignatureMatch::kDifferent;
  }
  for (; i > 0; --i) {
    if (!match_node(i - 1)) return SignatureMatch::kDifferent;
  }
  if (e != records.end) return SignatureMatch::kDifferent;
  return moved ? SignatureMatch::kAddressesOnly : SignatureMatch::kExact;
}

}  // namespace

}  // namespace tg
