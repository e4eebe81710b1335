// Memory layouts: the alignment table, the byte-exact NCx example, and conversions that round-trip.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "common/expect_error.h"
#include "tilegraph/sim/layout.h"

namespace tg::sim {
namespace {

TEST(Layout, Fp16NcxExampleIsByteExact) {
  // fp16 2x1x2x131 in NCx: 131 = 2 blocks of 64 and a remainder of 3, aligned to C0 = 4.
  const LayoutGeometry g({2, 1, 2, 131}, Format::FP16, MemLayout::NCx);
  EXPECT_EQ(g.cx(), 2);
  EXPECT_EQ(g.c0(), 4);
  // Batch 0 ends at bit 4224 (0x1080); batch 1 starts at the next 2048-bit boundary, bit 6144 (0x1800).
  EXPECT_EQ(g.batch_bytes() * 8, 0x1080u);
  EXPECT_EQ(g.batch_stride() * 8, 0x1800u);
  EXPECT_EQ(g.offset(1, 0, 0, 0) * 8, 0x1800u);
  // Within a batch: [Cx][HW][64] then [HW][C0].
  EXPECT_EQ(g.offset(0, 0, 1, 0), 64u * 2);        // second pixel of block 0
  EXPECT_EQ(g.offset(0, 0, 0, 64), 2u * 64 * 2);   // block 1 after both pixels of block 0
  EXPECT_EQ(g.offset(0, 0, 0, 128), 4u * 64 * 2);  // C0 part after the blocks
  EXPECT_EQ(g.offset(0, 0, 1, 130), (4u * 64 + 4 + 2) * 2);
  EXPECT_EQ(g.total_bytes() * 8, 0x1800u + 0x1080u);
}

TEST(Layout, AlignmentTable) {
  struct Case {
    Format format;
    int64_t c;
    int64_t cx, c0;
  };
  const Case cases[] = {
      {Format::FP32, 1, 0, 4},   {Format::FP16, 5, 0, 8},   {Format::BF16, 30, 0, 32},  {Format::TF32, 32, 0, 32},
      {Format::FP16, 33, 1, 0},  {Format::FP32, 64, 1, 0},  {Format::FP16, 65, 1, 4},   {Format::BF16, 100, 2, 0},
      {Format::FP16, 129, 2, 4}, {Format::INT8, 33, 0, 64}, {Format::INT8, 64, 0, 64},  {Format::INT8, 65, 1, 0},
      {Format::INT8, 129, 1, 4}, {Format::INT8, 200, 2, 0}, {Format::INT8, 300, 2, 64},
  };
  for (const Case& c : cases) {
    const LayoutGeometry g({1, 3, 5, c.c}, c.format, MemLayout::Cx);
    EXPECT_EQ(g.cx(), c.cx) << format_name(c.format) << " C=" << c.c;
    EXPECT_EQ(g.c0(), c.c0) << format_name(c.format) << " C=" << c.c;
    EXPECT_EQ(g.batch_stride() % kBatchAlignBytes, 0u);
  }
}

TEST(Layout, DenseLayoutsArePlainNhwc) {
  const LayoutGeometry g({3, 2, 5, 7}, Format::FP32, MemLayout::NTensor);
  EXPECT_EQ(g.offset(1, 1, 2, 3), ((1 * 2 + 1) * 5 + 2) * 7 * 4u + 3 * 4u);
  EXPECT_EQ(g.total_bytes(), 3u * 2 * 5 * 7 * 4);
}

TEST(Layout, BadShapesAndFormatsAreRefused) {
  using test::expect_error;
  expect_error([] { LayoutGeometry({2, 1, 1, 8}, Format::FP32, MemLayout::Tensor); }, "holds one batch");
  expect_error([] { LayoutGeometry({1, 1, 1, 8}, Format::INT32, MemLayout::NCx); }, "no alignment rule for int32");
  expect_error([] { LayoutGeometry({1, -1, 1, 8}, Format::FP32, MemLayout::NCx); }, "negative dimension");
}

// Random tensors through every pair of layouts come back bit for bit; aligned padding is zero.
TEST(Layout, ConversionsRoundTrip) {
  std::mt19937 rng(7);
  const int64_t channels[] = {1, 31, 32, 33, 63, 64, 65, 127, 128, 129};
  const Format formats[] = {Format::FP32, Format::FP16, Format::BF16, Format::TF32, Format::INT8};
  for (Format format : formats) {
    for (int64_t c : channels) {
      const Shape4 shape{int64_t(rng() % 3 + 1), int64_t(rng() % 4 + 1), int64_t(rng() % 5 + 1), c};
      const size_t eb = format_bytes(format);
      std::vector<uint8_t> dense(size_t(shape.elements()) * eb);
      for (uint8_t& b : dense) b = uint8_t(rng());
      for (MemLayout aligned : {MemLayout::NCx}) {
        const LayoutGeometry g(shape, format, aligned);
        std::vector<uint8_t> packed(g.total_bytes(), 0xAB);
        convert_layout(dense.data(), MemLayout::NTensor, packed.data(), aligned, shape, format);
        // Every element where the geometry says; everything else zero.
        std::vector<char> used(packed.size(), 0);
        for (int64_t n = 0; n < shape.n; ++n)
          for (int64_t h = 0; h < shape.h; ++h)
            for (int64_t w = 0; w < shape.w; ++w)
              for (int64_t ch = 0; ch < shape.c; ++ch) {
                const uint64_t at = g.offset(n, h, w, ch);
                const size_t i = size_t((((n * shape.h + h) * shape.w + w) * shape.c + ch)) * eb;
                ASSERT_EQ(std::memcmp(packed.data() + at, dense.data() + i, eb), 0);
                std::fill_n(used.begin() + ptrdiff_t(at), eb, 1);
              }
        for (size_t i = 0; i < packed.size(); ++i) {
          if (!used[i]) {
            ASSERT_EQ(packed[i], 0) << "padding byte " << i << " C=" << c;
          }
        }
        std::vector<uint8_t> back(dense.size());
        convert_layout(packed.data(), aligned, back.data(), MemLayout::NTensor, shape, format);
        EXPECT_EQ(back, dense) << format_name(format) << " " << shape_string(shape);
        // Aligned to aligned (NCx -> NCx) is a copy.
        std::vector<uint8_t> again(packed.size());
        convert_layout(packed.data(), aligned, again.data(), aligned, shape, format);
        EXPECT_EQ(again, packed);
      }
      if (shape.n == 1) {
        // The single-batch names describe the same bytes.
        std::vector<uint8_t> cx(LayoutGeometry(shape, format, MemLayout::Cx).total_bytes());
        convert_layout(dense.data(), MemLayout::Tensor, cx.data(), MemLayout::Cx, shape, format);
        std::vector<uint8_t> ncx(cx.size());
        convert_layout(dense.data(), MemLayout::NTensor, ncx.data(), MemLayout::NCx, shape, format);
        EXPECT_EQ(cx, ncx);
      }
    }
  }
}

}  // namespace
}  // namespace tg::sim
