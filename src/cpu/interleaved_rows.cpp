#include "interleaved_rows.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "tilegraph/core/error.h"
#include "tilegraph/core/quant.h"

namespace tg::cpu {

namespace {

// A q4_0, q4_1, q5_0 or q5_1 block of row r (Interleaved32).
template <class Block>
void place_block32(const Interleaved32& layout, const Block& b, int r, uint8_t* out) {
  std::memcpy(out + 2 * r, &b.d, 2);
  if constexpr (requires { b.m; }) std::memcpy(out + layout.m + 2 * r, &b.m, 2);
  for (int c = 0; c < 4; ++c) std::memcpy(out + layout.nibbles + c * kInterleavedChunkBytes + 4 * r, b.qs + 4 * c, 4);
  if constexpr (requires { b.qh; }) {
    uint32_t qh;
    std::memcpy(&qh, b.qh, sizeof qh);
    for (int j = 0; j < 4; ++j) {
      uint8_t bits = 0;
      for (int c = 0; c < 4; ++c)
        bits |= uint8_t((qh >> (4 * c + j) & 1) << c | (qh >> (16 + 4 * c + j) & 1) << (4 + c));
      out[layout.fifth + 4 * r + j] = bits;
    }
  }
}

// A q4_K or q5_K block of row r (InterleavedAffineK).
template <bool kFifth, class Block>
void place_affine_k(const Block& b, int r, uint8_t* out) {
  using L = InterleavedAffineK<kFifth>;
  std::memcpy(out + L::kD + 2 * r, &b.d, 2);
  std::memcpy(out + L::kDmin + 2 * r, &b.dmin, 2);
  for (int s = 0; s < 8; ++s) {
    int sc = 0, m = 0;
    unpack_scale_min_k(b.scales, s, &sc, &m);
    out[L::kScales + kInterleavedRows * s + r] = uint8_t(sc);
    out[L::kMins + 2 * kInterleavedRows * (s / 2) + 2 * r + s % 2] = uint8_t(m);
  }
  for (int c = 0; c < 32; ++c) std::memcpy(out + L::kChunks + c * kInterleavedChunkBytes + 4 * r, b.qs + 4 * c, 4);
  if constexpr (kFifth) {
    for (int c = 0; c < 8; ++c) std::memcpy(out + L::kFifthBits + c * kInterleavedChunkBytes + 4 * r, b.qh + 4 * c, 4);
  }
}

// One block of row r into its group's block at `out`.
void place_block(DType type, const void* block, int r, uint8_t* out) {
  const auto chunk = [&](size_t first, int c) { return out + first + c * kInterleavedChunkBytes + 4 * r; };
  switch (type) {
    case DType::Q4_0: return place_block32(interleaved32(type), *static_cast<const BlockQ4_0*>(block), r, out);
    case DType::Q4_1: return place_block32(interleaved32(type), *static_cast<const BlockQ4_1*>(block), r, out);
    case DType::Q5_0: return place_block32(interleaved32(type), *static_cast<const BlockQ5_0*>(block), r, out);
    case DType::Q5_1: return place_block32(interleaved32(type), *static_cast<const BlockQ5_1*>(block), r, out);
    case DType::Q8_0: {
      const auto& b = *static_cast<const BlockQ8_0*>(block);
      std::memcpy(out + 2 * r, &b.d, 2);
      for (int c = 0; c < 8; ++c) {
        for (int j = 0; j < 4; ++j) chunk(kInterleavedStepsBytes, c)[j] = uint8_t(b.qs[4 * c + j] ^ 0x80);
      }
      return;
    }
    case DType::Q4_K: return place_affine_k<false>(*static_cast<const BlockQ4_K*>(block), r, out);
    case DType::Q5_K: return place_affine_k<true>(*static_cast<const BlockQ5_K*>(block), r, out);
    case DType::Q6_K: {
      using L = InterleavedQ6K;
      const auto& b = *static_cast<const BlockQ6_K*>(block);
      std::memcpy(out + L::kD + 2 * r, &b.d, 2);
      for (int s = 0; s < 16; ++s)
        out[L::kScales + 2 * kInterleavedRows * (s / 2) + 2 * r + s % 2] = uint8_t(b.scales[s]);
      for (int h = 0; h < 2; ++h) {
        for (int c = 0; c < 8; ++c) {
          uint8_t* triplet = out + L::kTriplets + L::kTripletBytes * (8 * h + c) + 4 * r;
          std::memcpy(triplet, b.ql + 64 * h + 4 * c, 4);
          std::memcpy(triplet + kInterleavedChunkBytes, b.ql + 64 * h + 32 + 4 * c, 4);
          std::memcpy(triplet + 2 * kInterleavedChunkBytes, b.qh + 32 * h + 4 * c, 4);
        }
      }
      return;
    }
    default: break;
  }
  throw Error("cpu: interleave_rows: " + std::string(dtype_name(type)) + " is not laid out");
}

}  // namespace

bool interleaves(DType type) {
  switch (type) {
    case DType::Q4_0:
    case DType::Q4_1:
    case DType::Q5_0:
    case DType::Q5_1:
    case DType::Q8_0:
    case DType::Q4_K:
    case DType::Q5_K:
    case DType::Q6_K: return true;
    default: return false;
  }
}

size_t interleaved_block_bytes(DType type) {
  switch (type) {
    case DType::Q4_0:
    case DType::Q4_1:
    case DType::Q5_0:
    case DType::Q5_1: return interleaved32(type).bytes;
    case DType::Q8_0: return kInterleavedStepsBytes + 8 * kInterleavedChunkBytes;
    case DType::Q4_K: return InterleavedAffineK<false>::kBytes;
    case DType::Q5_K: return InterleavedAffineK<true>::kBytes;
    case DType::Q6_K: return InterleavedQ6K::kBytes;
    default: return 0;
  }
}

size_t interleaved_bytes(DType type, int64_t n, int64_t rows) {
  return size_t(interleaved_groups(rows)) * size_t(n / int64_t(dtype_traits(type).block_size)) *
         interleaved_block_bytes(type);
}

void interleave_groups(DType type, int64_t n, int64_t rows, const void* src, size_t stride, int64_t first, int64_t end,
                       uint8_t* out) {
  if (!interleaves(type)) throw Error("cpu: interleave_rows: " + std::string(dtype_name(type)) + " is not laid out");
  const int64_t block = int64_t(dtype_traits(type).block_size);
  if (n % block != 0) {
    throw Error("cpu: interleave_rows: rows of " + std::to_string(n) + " are not whole " + std::to_string(block) +
                "-element blocks");
  }
  const int64_t blocks = n / block;
  const size_t block_bytes = interleaved_block_bytes(type), source_block = dtype_traits(type).type_size;
  const size_t group_bytes = size_t(blocks) * block_bytes;
  std::memset(out + size_t(first) * group_bytes, 0,
              size_t(end - first) * group_bytes);  // a last group's padding rows stay 0
  for (int64_t row = first * kInterleavedRows; row < std::min(end * kInterleavedRows, rows); ++row) {
    const int64_t g = row / kInterleavedRows;
    const auto* row_blocks = static_cast<const uint8_t*>(src) + size_t(row) * stride;
    for (int64_t b = 0; b < blocks; ++b) {
      place_block(type, row_blocks + size_t(b) * source_block, int(row % kInterleavedRows),
                  out + size_t(g) * group_bytes + size_t(b) * block_bytes);
    }
  }
}

void interleave_rows(DType type, int64_t n, int64_t rows, const void* src, size_t stride, uint8_t* out) {
  interleave_groups(type, n, rows, src, stride, 0, interleaved_groups(rows), out);
}

}  // namespace tg::cpu
