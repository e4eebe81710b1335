// The AVX-512 check of GraphSignature's records (signature_records.h has the format): the same
// comparisons as the portable match_record in graph_signature.cpp, on 256-bit vectors with lane
// masks, in about two thirds of the instructions. Compiled for AVX-512 F/VL/BW/DQ;
// GraphSignature::matches calls it only on CPUs that have them. No 512-bit registers: on Intel
// cores they lower the clock for a while afterwards, which made key() right after a lookup
// ~15% slower.
#include <algorithm>

#include <immintrin.h>

#include "signature_records.h"

namespace tg::signature_records {

namespace {

template <bool kUpdateAddressSum>
inline bool match_record_avx512(const Tensor& t, const NodeSources* sources, uint64_t position, const uint64_t*& e,
                                uint64_t& moved, uint64_t& address_sum) {
  const uint64_t header = *e++;
  const uint64_t type_op = type_op_word(t);
  uint64_t diff = (header & ~kMetaBits) ^ type_op;
  if (header & kWide << kFlagsShift) [[unlikely]]
    diff = *e++ ^ type_op;
  diff |= io_flags_diff(header, t);
  const __m256i ne = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(t.ne));
  const __m256i nb = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(t.nb));
  __mmask8 differ;
  if (header & kSmallNe << kFlagsShift) [[likely]] {
    differ = _mm256_cmpneq_epu64_mask(_mm256_cvtepu16_epi64(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(e))), ne);
    ++e;
  } else {
    differ = _mm256_cmpneq_epu64_mask(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(e)), ne);
    e += kMaxDims;
  }
  if (header & kDefaultNb << kFlagsShift) [[likely]] {
    // default_nb_diff on lanes: [block_bytes, ne0 * row_factor >> kRowShift, nb1 * ne1, nb2 * ne2]
    // (the tensor's own nb1 and nb2: once they equal the defaults, so do the products).
    const TypeLayout& layout = kTypeLayouts[uint32_t(t.type) & kTypeLayoutMask];
    const __m256i factors =
        _mm256_mask_broadcastq_epi64(_mm256_permutexvar_epi64(_mm256_setr_epi64x(0, 0, 1, 2), ne), 0b0010,
                                     _mm_loadl_epi64(reinterpret_cast<const __m128i*>(&layout.row_factor)));
    const __m256i multiplicands = _mm256_permutex2var_epi64(nb, _mm256_setr_epi64x(0, 4, 1, 2), ne);
    __m256i expected =
        _mm256_srlv_epi64(_mm256_mullo_epi64(multiplicands, factors), _mm256_setr_epi64x(0, kRowShift, 0, 0));
    expected = _mm256_mask_broadcastq_epi64(expected, 0b0001,
                                            _mm_loadl_epi64(reinterpret_cast<const __m128i*>(&layout.block_bytes)));
    differ |= _mm256_cmpneq_epu64_mask(expected, nb);
  } else {
    differ |= _mm256_cmpneq_epu64_mask(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(e)), nb);
    e += kMaxDims;
  }
  bool owner = true;
  if (sources) {
    if (header & kViewOffs << kFlagsShift) [[unlikely]] {
      diff |= *e++ ^ t.view_offs;
    } else {
      diff |= t.view_offs;
    }
    if (header & kDerived << kFlagsShift) {
      diff |= t.view_src == nullptr;
      owner = false;
    } else {
      diff |= reinterpret_cast<uintptr_t>(t.view_src);
    }
  }
  if (owner) {
    const uint64_t address = reinterpret_cast<uintptr_t>(t.data), recorded = *e++;
    moved |= address ^ recorded;
    if constexpr (kUpdateAddressSum) {
      if (address != recorded) [[unlikely]]
        address_sum += moved_address_delta(address, recorded, position);
    }
  }
  if (sources) {
    const uint32_t n_params = uint32_t(header >> kParamWordsShift & 15);
    const __mmask8 param_lanes = __mmask8((1u << n_params) - 1);
    const __mmask8 params =
        _mm256_cmpneq_epu64_mask(_mm256_maskz_loadu_epi64(param_lanes, e),
                                 _mm256_loadu_si256(reinterpret_cast<const __m256i*>(t.op_params))) |
        _mm256_cmpneq_epu64_mask(_mm256_maskz_loadu_epi64(__mmask8(param_lanes >> 4), e + 4),
                                 _mm256_loadu_si256(reinterpret_cast<const __m256i*>(t.op_params + 8)));
    e += n_params;
    const uint32_t n_sources = uint32_t(header >> kSourceCountShift & 15);
    diff |= n_sources ^ sources->count;
    // Lanes both have (a count that differs is a difference already).
    const uint32_t source_lanes = (1u << std::min<uint64_t>(n_sources, sources->count)) - 1;
    const __mmask8 low = __mmask8(source_lanes);
    uint32_t source_differ = _mm256_mask_cmpneq_epi32_mask(low, _mm256_maskz_loadu_epi32(low, e),
                                                           _mm256_maskz_loadu_epi32(low, sources->refs));
    if (const __mmask8 high = __mmask8(source_lanes >> 8)) [[unlikely]] {
      source_differ |= _mm_mask_cmpneq_epi32_mask(high, _mm_maskz_loadu_epi32(high, e + 4),
                                                  _mm_maskz_loadu_epi32(high, sources->refs + 8));
    }
    e += (n_sources + 1) / 2;
    diff |= source_differ;
    differ |= params;
  }
  return (diff | differ) == 0;
}

}  // namespace

template <bool kUpdateAddressSum>
SignatureMatch verify_avx512(const Graph& graph, const RecordView& records, uint64_t* address_sum) {
  return walk_records<kUpdateAddressSum>(
      graph, records, address_sum,
      [](const Tensor& t, const NodeSources* sources, uint64_t position, const uint64_t*& e, uint64_t& moved,
         uint64_t& sum) { return match_record_avx512<kUpdateAddressSum>(t, sources, position, e, moved, sum); });
}

template SignatureMatch verify_avx512<false>(const Graph&, const RecordView&, uint64_t*);
template SignatureMatch verify_avx512<true>(const Graph&, const RecordView&, uint64_t*);

}  // namespace tg::signature_records
