// move_boxes (ddr_move.h) checked by what it claims: on random moves (views of a larger tensor with
// its dimensions permuted, transposes, concat operands, sizes 1, primes and around 32/64/128,
// element sizes 1/2/4, box limits from a few bytes up) the boxes, read as windows of their
// row-major extents, send every source byte to its destination byte and nothing else, each box
// within the limit. The cases where a move must be few boxes are checked by count.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <numeric>
#include <random>
#include <utility>
#include <vector>

#include "tilegraph/compiler/ddr_move.h"

namespace tg::compiler {
namespace {

using Pairs = std::vector<std::pair<uint64_t, uint64_t>>;

// Every (source byte, destination byte) of the move, element by element.
Pairs expected_pairs(const MoveDims& size, const MoveDims& src, const MoveDims& dst, uint64_t eb) {
  Pairs pairs;
  for (int64_t a = 0; a < size[0]; ++a)
    for (int64_t b = 0; b < size[1]; ++b)
      for (int64_t c = 0; c < size[2]; ++c)
        for (int64_t d = 0; d < size[3]; ++d) {
          const uint64_t s = uint64_t(a * src[0] + b * src[1] + c * src[2] + d * src[3]) * eb;
          const uint64_t t = uint64_t(a * dst[0] + b * dst[1] + c * dst[2] + d * dst[3]) * eb;
          for (uint64_t byte = 0; byte < eb; ++byte) pairs.emplace_back(s + byte, t + byte);
        }
  std::sort(pairs.begin(), pairs.end());
  return pairs;
}

// The byte offset of index i in the row-major extents `whole`.
uint64_t offset(const MoveDims& whole, const MoveDims& i) {
  return uint64_t(((i[0] * whole[1] + i[1]) * whole[2] + i[2]) * whole[3] + i[3]);
}

// What the boxes move, as the DMA reads and writes their windows (expects each well formed).
Pairs box_pairs(const std::vector<MoveBox>& boxes, uint64_t max_box_bytes) {
  Pairs pairs;
  for (const MoveBox& box : boxes) {
    EXPECT_LE(box.bytes(), max_box_bytes);
    for (size_t d = 0; d < 4; ++d) {
      EXPECT_GE(box.size[d], 1);
      EXPECT_LE(box.size[d], box.src_whole[d]);
      EXPECT_LE(box.size[d], box.dst_whole[d]);
    }
    MoveDims i{};
    for (i[0] = 0; i[0] < box.size[0]; ++i[0])
      for (i[1] = 0; i[1] < box.size[1]; ++i[1])
        for (i[2] = 0; i[2] < box.size[2]; ++i[2])
          for (i[3] = 0; i[3] < box.size[3]; ++i[3])
            pairs.emplace_back(box.src + offset(box.src_whole, i), box.dst + offset(box.dst_whole, i));
  }
  std::sort(pairs.begin(), pairs.end());
  return pairs;
}

MoveDims row_major(const MoveDims& shape) { return {shape[1] * shape[2] * shape[3], shape[2] * shape[3], shape[3], 1}; }

int64_t pick(std::mt19937& rng, std::initializer_list<int64_t> values) {
  std::vector<int64_t> v(values);
  return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng)];
}

TEST(DdrMove, BoxesMoveEveryByteToItsPlace) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 400; ++trial) {
    MoveDims size;
    for (int64_t& s : size) s = pick(rng, {1, 1, 2, 3, 7, 13, 31, 32, 33, 64});
    if (size[0] * size[1] * size[2] * size[3] > 40000) size[0] = size[1] = 1;
    const uint64_t eb = uint64_t(pick(rng, {1, 2, 4}));
    // The source: a window of a larger parent whose dimensions are stored in a random order
    // (a view or a transpose), or the plain row-major layout (a reshape).
    MoveDims parent = size;
    for (int64_t& p : parent) p += pick(rng, {0, 0, 1, 5});
    std::array<int, 4> order{0, 1, 2, 3};
    if (trial % 3 != 0) std::shuffle(order.begin(), order.end(), rng);
    MoveDims src{};
    int64_t stride = 1;
    for (int k = 3; k >= 0; --k) {
      src[size_t(order[size_t(k)])] = stride;
      stride *= parent[size_t(order[size_t(k)])];
    }
    // The destination: row-major, inside a larger result along one dimension (a concat operand).
    MoveDims out = size;
    out[size_t(pick(rng, {0, 1, 2, 3}))] += pick(rng, {0, 0, 4});
    const MoveDims dst = row_major(out);
    const uint64_t max_box = uint64_t(pick(rng, {1, 3, 64, 1000, 4096, 1 << 20}));
    const std::vector<MoveBox> boxes = move_boxes(size, src, dst, eb, max_box);
    ASSERT_EQ(box_pairs(boxes, max_box), expected_pairs(size, src, dst, eb))
        << "trial " << trial << ": size " << size[0] << "x" << size[1] << "x" << size[2] << "x" << size[3]
        << ", element bytes " << eb << ", box limit " << max_box;
  }
}

TEST(DdrMove, FewBoxesWhereTheLayoutsAllowIt) {
  // A contiguous reshape is one box; beyond the limit, chunks of whole rows.
  EXPECT_EQ(move_boxes({1, 4, 8, 128}, row_major({1, 4, 8, 128}), row_major({1, 4, 8, 128}), 4, 1 << 20).size(), 1u);
  EXPECT_EQ(move_boxes({1, 4, 8, 128}, row_major({1, 4, 8, 128}), row_major({1, 4, 8, 128}), 4, 4096).size(), 4u);
  // A KV-cache view (positions x heads x dims stored, heads x positions x dims read): one box per
  // head.
  const std::vector<MoveBox> heads =
      move_boxes({1, 8, 64, 128}, {0, 128, 1024, 1}, row_major({1, 8, 64, 128}), 2, 1 << 20);
  ASSERT_EQ(heads.size(), 8u);
  EXPECT_EQ(heads[1].src, 256u);
  EXPECT_EQ(heads[1].dst, 64u * 128 * 2);
  // Rows of a wider tensor: one strided box.
  EXPECT_EQ(move_boxes({1, 1, 33, 7}, {0, 0, 10, 1}, row_major({1, 1, 33, 7}), 4, 1 << 20).size(), 1u);
  // Nothing to move.
  EXPECT_TRUE(move_boxes({1, 0, 3, 3}, {0, 9, 3, 1}, {0, 9, 3, 1}, 4, 1 << 20).empty());
}

}  // namespace
}  // namespace tg::compiler
