#pragma once
// Quantized weight matrices laid out for decode (ggml's CPU repack buffer type): 16 rows side by
// side, so that one 512-bit register holds 4 consecutive quants of each of 16 rows and one
// broadcast of 4 activation quants multiplies all of them (vpdpbusd). The matrix is then one
// sequential stream, and no lanes are reduced across. Each row's sum is its own lane, so every
// instruction set gives the same bits (vec_impl_interleaved.h).
//
// Layout: groups of kInterleavedRows rows (the last one padded with zero rows), each group the
// rows' blocks in order; within a block, "[x][r]" is x of each of the 16 rows r in turn, and a
// chunk is 64 bytes, 4 of each row (row r at bytes 4r .. 4r + 3):
//   q4_0  d [r] f16; 4 chunks, chunk c byte 4r + j = row r's qs[4c + j] as it is (low nibble
//         element 4c + j, high nibble element 16 + 4c + j).
//   q4_1  d [r], m [r] f16; the 4 chunks of q4_0.
//   q5_0  d [r] f16; a chunk of fifth bits, byte 4r + j bit c = element 4c + j's and bit 4 + c
//         element 16 + 4c + j's (as each chunk's nibbles need them, one shift away); q4_0's 4
//         chunks of nibbles.
//   q5_1  d [r], m [r] f16, then q5_0's chunks.
//   q8_0  d [r] f16; 8 chunks, chunk c = elements 4c .. 4c + 3 as q + 128 (unsigned, for vpdpbusd).
//   q4_K  d [r], dmin [r] f16; the 6-bit scales [s][r] and mins [s / 2][r][s % 2] as bytes
//         (sub-block s = elements 32s .. 32s + 31); 32 chunks, chunk 8h + c = row r's qs[32h + 4c
//         .. + 3] as they are (low nibbles sub-block 2h's quad c, high nibbles sub-block 2h + 1's).
//   q5_K  q4_K's, with 8 chunks of fifth bits before the nibbles: chunk c = row r's qh[4c .. + 3]
//         as they are (bit s of byte j: element 32s + 4c + j's).
//   q6_K  d [r] f16; the int8 scales [s / 2][r][s % 2] (sub-block s = elements 16s .. 16s + 15);
//         then for h = 0, 1 and c = 0 .. 7 three chunks: row r's ql[64h + 4c .. + 3], ql[64h + 32
//         + 4c .. + 3] and qh[32h + 4c .. + 3] as they are, in the order the kernel reads them (3
//         places at once in each block held it to ~40% of the stored rows' speed). Element 128h +
//         32g + l (g < 4, l < 32) has its low 4 bits in triplet 8h + l / 4's chunk g % 2 (the high
//         nibble for g >= 2) and its top 2 bits at bit 2g of the triplet's third chunk, each at
//         byte l % 4 of the row's 4.

#include <cstddef>
#include <cstdint>

#include "tilegraph/core/dtype.h"

namespace tg::cpu {

inline constexpr int kInterleavedRows = 16;
inline constexpr size_t kInterleavedChunkBytes = 64;                    // 4 bytes of each of the 16 rows
inline constexpr size_t kInterleavedStepsBytes = kInterleavedRows * 2;  // an f16 of each row (d, m)

// Byte offsets within a block of a group of the 32-element types with unsigned quants (q4_0, q4_1,
// q5_0, q5_1): m (0: none), the chunk of fifth bits (0: none), the nibbles; and the centre that
// the quants are taken back by (8, 16; 0 with m).
struct Interleaved32 {
  size_t m, fifth, nibbles, bytes;
  int centre;
};
constexpr Interleaved32 interleaved32(DType type) {
  constexpr size_t kSteps = kInterleavedStepsBytes, kChunk = kInterleavedChunkBytes;
  switch (type) {
    case DType::Q4_1: return {kSteps, 0, 2 * kSteps, 2 * kSteps + 4 * kChunk, 0};
    case DType::Q5_0: return {0, kSteps, kSteps + kChunk, kSteps + 5 * kChunk, 16};
    case DType::Q5_1: return {kSteps, 2 * kSteps, 2 * kSteps + kChunk, 2 * kSteps + 5 * kChunk, 0};
    default: return {0, 0, kSteps, kSteps + 4 * kChunk, 8};  // q4_0
  }
}

// Byte offsets within a q4_K (kFifth false) or q5_K block of a group.
template <bool kFifth>
struct InterleavedAffineK {
  static constexpr size_t kD = 0, kDmin = 32, kScales = 64, kMins = 192, kFifthBits = 320;
  static constexpr size_t kChunks = kFifthBits + (kFifth ? 8 * kInterleavedChunkBytes : 0);
  static constexpr size_t kBytes = kChunks + 32 * kInterleavedChunkBytes;
};

// Byte offsets within a q6_K block of a group.
struct InterleavedQ6K {
  static constexpr size_t kD = 0, kScales = 32, kTriplets = 288, kTripletBytes = 3 * kInterleavedChunkBytes;
  static constexpr size_t kBytes = kTriplets + 16 * kTripletBytes;
};

// The types laid out this way.
bool interleaves(DType type);
// Bytes of one block of a group (a block of each of 16 rows), and of a whole matrix.
size_t interleaved_block_bytes(DType type);
size_t interleaved_bytes(DType type, int64_t n, int64_t rows);
// Lays out `rows` rows of n elements (whole blocks, contiguous; rows `stride` bytes apart) into
// interleaved_bytes(type, n, rows) bytes at `out`: interleave_groups writes groups [first, end)
// of them (each its own bytes, so threads may write groups apart), interleave_rows all.
void interleave_groups(DType type, int64_t n, int64_t rows, const void* src, size_t stride, int64_t first, int64_t end,
                       uint8_t* out);
void interleave_rows(DType type, int64_t n, int64_t rows, const void* src, size_t stride, uint8_t* out);
inline int64_t interleaved_groups(int64_t rows) { return (rows + kInterleavedRows - 1) / kInterleavedRows; }

}  // namespace tg::cpu
