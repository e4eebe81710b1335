// LSU instructions: DMA slices of DDR tensors into SPM layouts and back, gathers and scatters
// of rows, TDMA reshapes and gather-scatter, and the fp16 -> fp32 widening recipe.
#include <gtest/gtest.h>

#include <cstring>

#include "sim_test_utils.h"
#include "tilegraph/sim/cgra.h"
#include "tilegraph/sim/lsu.h"

namespace tg::sim {
namespace {

using namespace lsu;

ChipConfig small_chip() {
  ChipConfig c;
  c.mesh_x = c.mesh_y = 2;
  return c;
}

std::vector<uint8_t> random_bytes(test::Rng& rng, size_t n) {
  std::vector<uint8_t> v(n);
  for (uint8_t& b : v) b = uint8_t(rng());
  return v;
}

// The dense NHWC bytes of `slice` of a tensor of shape `whole`, by element index.
std::vector<uint8_t> slice_of(const std::vector<uint8_t>& whole_bytes, const DdrSlice& s, size_t eb) {
  std::vector<uint8_t> out;
  for (int64_t n = 0; n < s.slice.n; ++n)
    for (int64_t h = 0; h < s.slice.h; ++h)
      for (int64_t w = 0; w < s.slice.w; ++w)
        for (int64_t c = 0; c < s.slice.c; ++c) {
          const size_t i = size_t(
              (((s.start.n + n) * s.whole.h + s.start.h + h) * s.whole.w + s.start.w + w) * s.whole.c + s.start.c + c);
          out.insert(out.end(), whole_bytes.begin() + ptrdiff_t(i * eb), whole_bytes.begin() + ptrdiff_t((i + 1) * eb));
        }
  return out;
}

TEST(Lsu, LoadVarAndDmaStoreMoveSlicesInEveryLayout) {
  Chip chip(small_chip());
  Tile& tile = chip.tile(3);
  test::Rng rng(21);
  const Shape4 whole{3, 5, 6, 131};
  for (Format f : {Format::FP16, Format::FP32, Format::INT8}) {
    const size_t eb = format_bytes(f);
    const std::vector<uint8_t> data = random_bytes(rng, size_t(whole.elements()) * eb);
    chip.ddr().write(1 << 20, data.data(), data.size());
    const DdrSlice slices[] = {
        {1 << 20, whole, {0, 0, 0, 0}, whole},           // everything: one run
        {1 << 20, whole, {1, 2, 0, 0}, {2, 3, 6, 131}},  // whole rows
        {1 << 20, whole, {0, 1, 2, 64}, {1, 3, 3, 67}},  // a channel window
    };
    for (const DdrSlice& s : slices) {
      for (MemLayout layout : {MemLayout::NTensor, MemLayout::NCx, MemLayout::Tensor, MemLayout::Cx}) {
        if ((layout == MemLayout::Tensor || layout == MemLayout::Cx) && s.slice.n != 1) continue;
        execute(tile, LoadVar{f, s, 4096, layout});
        const LayoutGeometry g(s.slice, f, layout);
        std::vector<uint8_t> spm(g.total_bytes()), dense(size_t(s.slice.elements()) * eb);
        tile.spm().read(4096, spm.data(), spm.size());
        convert_layout(spm.data(), layout, dense.data(), MemLayout::NTensor, s.slice, f);
        ASSERT_EQ(dense, slice_of(data, s, eb))
            << format_name(f) << " " << mem_layout_name(layout) << " " << shape_string(s.slice);
        // Back to another DDR tensor at the same place.
        DdrSlice out = s;
        out.addr = 32 << 20;
        const std::vector<uint8_t> zeros(data.size(), 0);
        chip.ddr().write(out.addr, zeros.data(), zeros.size());
        execute(tile, DmaStore{f, 4096, layout, out});
        std::vector<uint8_t> back(data.size());
        chip.ddr().read(out.addr, back.data(), back.size());
        ASSERT_EQ(slice_of(back, s, eb), slice_of(data, s, eb));
      }
    }
  }
}

TEST(Lsu, LoadConstGatherAndScatterRows) {
  Chip chip(small_chip());
  Tile& tile = chip.tile(0);
  test::Rng rng(22);
  const uint64_t row = 48, rows = 100;
  const std::vector<uint8_t> table = random_bytes(rng, row * rows);
  chip.ddr().write(0, table.data(), table.size());
  execute(tile, LoadConst{0, 8192, 300});
  std::vector<uint8_t> got(300);
  tile.spm().read(8192, got.data(), got.size());
  EXPECT_TRUE(std::equal(got.begin(), got.end(), table.begin()));
  const std::vector<int32_t> idx = {5, 99, 0, 5, 42};
  tile.spm().write(0, idx.data(), idx.size() * 4);
  execute(tile, RdmaGather{0, row, row, int64_t(rows), 0, 5, 16384});
  std::vector<uint8_t> gathered(5 * row);
  tile.spm().read(16384, gathered.data(), gathered.size());
  for (size_t i = 0; i < idx.size(); ++i) {
    ASSERT_EQ(std::memcmp(gathered.data() + i * row, table.data() + size_t(idx[i]) * row, row), 0) << i;
  }
  // Scatter rows 0..2 of the gathered block to rows 7, 8, 9 of another table (stride 64).
  const std::vector<int32_t> where = {7, 8, 9};
  tile.spm().write(64, where.data(), 12);
  execute(tile, WdmaScatter{16384, row, 64, 3, 1 << 20, 64, 10});
  for (size_t i = 0; i < 3; ++i) {
    std::vector<uint8_t> r(row);
    chip.ddr().read((1 << 20) + (7 + i) * 64, r.data(), row);
    ASSERT_EQ(std::memcmp(r.data(), gathered.data() + i * row, row), 0);
  }
  test::expect_error(
      [&] {
        const int32_t bad = 100;
        tile.spm().write(0, &bad, 4);
        execute(tile, RdmaGather{0, row, row, int64_t(rows), 0, 1, 16384});
      },
      "op_rdmaGather on tile 0: index 0 is 100, outside [0, 100)");
}

TEST(Lsu, ReshapeConvertsLayoutsInSpm) {
  Chip chip(small_chip());
  Tile& tile = chip.tile(1);
  test::Rng rng(23);
  const Shape4 shape{2, 3, 2, 70};
  const std::vector<uint8_t> dense = random_bytes(rng, size_t(shape.elements()) * 2);
  tile.spm().write(0, dense.data(), dense.size());
  execute(tile, Reshape{Format::BF16, shape, 0, MemLayout::NTensor, 65536, MemLayout::NCx});
  const LayoutGeometry g(shape, Format::BF16, MemLayout::NCx);
  std::vector<uint8_t> expect(g.total_bytes()), got(g.total_bytes());
  convert_layout(dense.data(), MemLayout::NTensor, expect.data(), MemLayout::NCx, shape, Format::BF16);
  tile.spm().read(65536, got.data(), got.size());
  EXPECT_EQ(got, expect);
  execute(tile, Reshape{Format::BF16, shape, 65536, MemLayout::NCx, 131072, MemLayout::NTensor});
  std::vector<uint8_t> back(dense.size());
  tile.spm().read(131072, back.data(), back.size());
  EXPECT_EQ(back, dense);
  test::expect_error(
      [&] {
        execute(tile, Reshape{Format::BF16, shape, 0, MemLayout::NTensor, 16, MemLayout::NCx});
      },
      "op_reshape.bf16 on tile 1: source and destination overlap");
}

// fp16 -> fp32 as the TX8 toolchain widens: gather-scatter the packed fp16 values into the
// upper half of the fp32 buffer, then convert in place toward its start.
TEST(Lsu, WideningRecipeGatherScatterThenConvert) {
  Chip chip(small_chip());
  Tile& tile = chip.tile(2);
  test::Rng rng(24);
  for (int64_t n : {1, 31, 64, 1001}) {
    const std::vector<float> x = test::put(tile, 0, test::random_values(rng, n, -100, 100), Format::FP16);
    const uint64_t buffer = 1 << 20, bytes = uint64_t(n) * 2;
    execute(tile, GatherScatter{0, buffer + bytes, bytes, 1, 0, 0});
    execute(tile, cgra::ConvertV{Format::FP16, Format::FP32, buffer + bytes, buffer, n});
    Context ctx;
    Tensor* half = ctx.new_tensor(DType::F16, {n});
    from_f32(Format::FP16, x.data(), half->data, n, RoundMode::NearestEven);
    Tensor* wide = cpy(ctx, half, ctx.new_tensor(DType::F32, {n}));
    EXPECT_EQ(test::get(tile, buffer, n, Format::FP32), test::reference_result(wide)) << n;
  }
  // Strided segments: every other fp16 value into 4-byte slots.
  test::put(tile, 0, {1, 2, 3, 4, 5, 6}, Format::FP16);
  execute(tile, GatherScatter{0, 4096, 2, 3, 4, 4});
  EXPECT_EQ(test::get(tile, 4096, 1, Format::FP16)[0], 1.0f);
  EXPECT_EQ(test::get(tile, 4100, 1, Format::FP16)[0], 3.0f);
  EXPECT_EQ(test::get(tile, 4104, 1, Format::FP16)[0], 5.0f);
}

}  // namespace
}  // namespace tg::sim

namespace tg::sim {
namespace {

// A slice given only its size starts at the tensor's first element.
TEST(Lsu, SliceStartsAtTheOriginByDefault) {
  ChipConfig c;
  c.mesh_x = c.mesh_y = 1;
  Chip chip(c);
  const std::vector<float> values = {1, 2, 3, 4, 5, 6, 7, 8};
  chip.ddr().write(0, values.data(), values.size() * 4);
  lsu::DdrSlice slice;
  slice.addr = 0;
  slice.whole = {1, 1, 2, 4};
  slice.slice = {1, 1, 1, 4};
  execute(chip.tile(0), lsu::LoadVar{Format::FP32, slice, 0, MemLayout::Tensor});
  EXPECT_EQ(test::get(chip.tile(0), 0, 4, Format::FP32), (std::vector<float>{1, 2, 3, 4}));
}

}  // namespace
}  // namespace tg::sim
