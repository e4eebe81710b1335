// CGRA instructions against the core reference on random sizes, per float format (tolerances in
// sim_test_utils.h: 2 ulp of the format; ints exact). Functions the reference has no op for
// (log, recip, max/min, relational, logical, bit) are checked against the C++ expression.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "sim_test_utils.h"
#include "tilegraph/sim/cgra.h"
#include "tilegraph/sim/layout.h"

namespace tg::sim {
namespace {

using namespace cgra;
using test::expect_close;
using test::get;
using test::put;

constexpr Format kFloatFormats[] = {Format::FP32, Format::FP16, Format::BF16, Format::TF32};
constexpr int64_t kSizes[] = {1, 7, 64, 127, 129, 1000};

ChipConfig one_tile() {
  ChipConfig c;
  c.mesh_x = c.mesh_y = 1;
  return c;
}

TEST(Cgra, ArithVVMatchesReference) {
  Chip chip(one_tile());
  Tile& tile = chip.tile(0);
  test::Rng rng(1);
  const std::pair<ArithOp, Tensor* (*)(Context&, Tensor*, Tensor*)> ops[] = {
      {ArithOp::Add, add}, {ArithOp::Sub, sub}, {ArithOp::Mul, mul}, {ArithOp::Div, div}};
  for (Format f : kFloatFormats) {
    for (int64_t n : kSizes) {
      for (const auto& [op, build] : ops) {
        std::vector<float> bv = test::random_values(rng, n, 0.5f, 2.0f);
        if (op != ArithOp::Div) bv = test::random_values(rng, n);
        const std::vector<float> a = put(tile, 0, test::random_values(rng, n), f);
        const std::vector<float> b = put(tile, 8192, bv, f);
        const uint64_t cycles = execute(tile, ArithVV{op, f, 0, 8192, 16384, n});
        EXPECT_GT(cycles, 0u);
        Context ctx;
        const std::vector<float> ref =
            test::reference_result(build(ctx, test::tensor_of(ctx, a, {n}), test::tensor_of(ctx, b, {n})));
        expect_close(get(tile, 16384, n, f), ref, f, instruction_name(ArithVV{op, f}) + " n=" + std::to_string(n));
      }
    }
  }
}

TEST(Cgra, MaxMinPropagateNaN) {
  Chip chip(one_tile());
  Tile& tile = chip.tile(0);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> a = {1, nan, -3, 4, 5, 6, 7, 8, 9};
  const std::vector<float> b = {2, 0, nan, -4, 5, 1, 9, 3, 10};
  put(tile, 0, a, Format::FP32);
  put(tile, 64, b, Format::FP32);
  execute(tile, ArithVV{ArithOp::Max, Format::FP32, 0, 64, 128, 9});
  execute(tile, ArithVV{ArithOp::Min, Format::FP32, 0, 64, 192, 9});
  const std::vector<float> mx = get(tile, 128, 9, Format::FP32), mn = get(tile, 192, 9, Format::FP32);
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) || std::isnan(b[i])) {
      EXPECT_TRUE(std::isnan(mx[i]) && std::isnan(mn[i])) << i;
    } else {
      EXPECT_EQ(mx[i], std::max(a[i], b[i]));
      EXPECT_EQ(mn[i], std::min(a[i], b[i]));
    }
  }
}

TEST(Cgra, ArithVSMatchesReference) {
  Chip chip(one_tile());
  Tile& tile = chip.tile(0);
  test::Rng rng(2);
  for (Format f : kFloatFormats) {
    for (int64_t n : kSizes) {
      const float s = round_to(f, 0.75f);
      const std::vector<float> a = put(tile, 0, test::random_values(rng, n, 0.5f, 2.0f), f);
      Context ctx;
      Tensor* ta = test::tensor_of(ctx, a, {n});
      Tensor* ts = test::tensor_of(ctx, {s}, {1});
      struct Case {
        ArithOp op;
        bool scalar_first;
        Tensor* ref;
      };
      const Case cases[] = {
          {ArithOp::Add, false, add(ctx, ta, ts)},
          {ArithOp::Sub, false, sub(ctx, ta, ts)},
          {ArithOp::Mul, false, mul(ctx, ta, ts)},
          {ArithOp::Div, false, div(ctx, ta, ts)},
          {ArithOp::Sub, true, scale(ctx, ta, -1.0f, s)},  // s - a
          {ArithOp::Div, true, div(ctx, test::tensor_of(ctx, std::vector<float>(size_t(n), s), {n}), ta)},
      };
      for (const Case& c : cases) {
        const ArithVS in{c.op, f, 0, s, 8192, n, RoundMode::NearestEven, c.scalar_first};
        execute(tile, in);
        expect_close(get(tile, 8192, n, f), test::reference_result(c.ref), f, instruction_name(in));
      }
    }
  }
}

TEST(Cgra, IntArithmeticIsExactAndSaturates) {
  Chip chip(one_tile());
  Tile& tile = chip.tile(0);
  const std::vector<float> a = {100, -100, 7, -7, 127, 0};
  const std::vector<float> b = {100, -100, 2, 2, 1, 5};
  put(tile, 0, a, Format::INT8);
  put(tile, 64, b, Format::INT8);
  execute(tile, ArithVV{ArithOp::Add, Format::INT8, 0, 64, 128, 6});
  EXPECT_EQ(get(tile, 128, 6, Format::INT8), (std::vector<float>{127, -128, 9, -5, 127, 5}));
  execute(tile, ArithVV{ArithOp::Div, Format::INT8, 0, 64, 128, 6});
  EXPECT_EQ(get(tile, 128, 6, Format::INT8), (std::vector<float>{1, 1, 3, -3, 127, 0}));
  put(tile, 256, {1 << 30, -5, 3}, Format::INT32);
  execute(tile, ArithVS{ArithOp::Mul, Format::INT32, 256, 4, 320, 3});
  EXPECT_EQ(get(tile, 320, 3, Format::INT32),
            (std::vector<float>{float(std::numeric_limits<int32_t>::max()), -20, 12}));
  test::expect_error(
      [&] {
        execute(tile, ArithVS{ArithOp::Div, Format::INT32, 256, 0, 320, 3});
      },
      "CGRATensor_ArithOp_VS_div.int32 on tile 0: integer division by zero");
}

TEST(Cgra, VuVBroadcastsTheUnitVector) {
  Chip chip(one_tile());
  Tile& tile = chip.tile(0);
  test::Rng rng(3);
  for (Format f : kFloatFormats) {
    for (int64_t unit : {1, 4, 30, 32}) {
      const int64_t rows = 13;
      const std::vector<float> a = put(tile, 0, test::random_values(rng, unit * rows), f);
      const std::vector<float> u = put(tile, 65536, test::random_values(rng, unit), f);
      for (const auto& [op, build] :
           {std::pair{ArithOp::Mul, &mul}, std::pair{ArithOp::Add, &add}, std::pair{ArithOp::Sub, &sub}}) {
        const ArithVuV in{op, f, 0, 65536, 131072, unit * rows, unit};
        execute(tile, in);
        Context ctx;
        Tensor* ref = build(ctx, test::tensor_of(ctx, a, {unit, rows}), test::tensor_of(ctx, u, {unit}));
        expect_close(get(tile, 131072, unit * rows, f), test::reference_result(ref), f, instruction_name(in));
      }
    }
  }
}

// The batch-norm pattern: an NCx tensor times a per-channel vector, VuV_mul_loop over the Cx
// blocks of each batch and VuV_mul over its C0 part, against the reference on dense NHWC.
TEST(Cgra, VuVMulLoopCoversTheCxBlocksOfAnNcxBatch) {
  Chip chip(one_tile());
  Tile& tile = chip.tile(0);
  test::Rng rng(4);
  for (Format f : {Format::FP32, Format::FP16, Format::BF16}) {
    for (int64_t c : {33, 64, 65, 129, 131, 200}) {
      const Shape4 shape{2, 3, 5, c};
      const LayoutGeometry g(shape, f, MemLayout::NCx);
      const std::vector<float> x = test::random_values(rng, shape.elements());
      std::vector<float> xr(x.size());
      for (size_t i = 0; i < x.size(); ++i) xr[i] = round_to(f, x[i]);
      // The channel vector padded like a channel row: Cx*64 then C0 aligned.
      const int64_t padded = g.cx() * 64 + g.c0();
      std::vector<float> scale = test::random_values(rng, c);
      for (float& s : scale) s = round_to(f, s);
      std::vector<float> unit(size_t(padded), 0.0f);
      std::copy(scale.begin(), scale.end(), unit.begin());
      // x in NCx at 0, the unit vector after it.
      std::vector<uint8_t> dense(x.size() * format_bytes(f)), packed(g.total_bytes());
      from_f32(f, xr.data(), dense.data(), int64_t(x.size()), RoundMode::NearestEven);
      convert_layout(dense.data(), MemLayout::NTensor, packed.data(), MemLayout::NCx, shape, f);
      tile.spm().write(0, packed.data(), packed.size());
      const uint64_t unit_addr = 1 << 20, out = 2 << 20;
      put(tile, unit_addr, unit, f);
      const int64_t hw = shape.h * shape.w;
      const uint64_t eb = format_bytes(f);
      for (int64_t b = 0; b < shape.n; ++b) {
        const uint64_t base = uint64_t(b) * g.batch_stride();
        if (g.cx() > 0) {
          execute(tile, ArithVuVLoop{ArithOp::Mul, f, base, unit_addr, out + base, hw * 64, 64, g.cx() * hw * 64,
                                     g.cx() * 64});
        }
        if (g.c0() > 0) {
          const uint64_t c0_at = base + uint64_t(g.cx() * hw * 64) * eb;
          execute(tile, ArithVuV{ArithOp::Mul, f, c0_at, unit_addr + uint64_t(g.cx() * 64) * eb, out + c0_at,
                                 hw * g.c0(), g.c0()});
        }
      }
      // Reference: x * scale over the channel axis (dense NHWC: ne0 = C).
      Context ctx;
      Tensor* ref =
          mul(ctx, test::tensor_of(ctx, xr, {c, shape.w, shape.h, shape.n}), test::tensor_of(ctx, scale, {c}));
      const std::vector<float> expected = test::reference_result(ref);
      std::vector<uint8_t> result(g.total_bytes()), back(dense.size());
      for (int64_t b = 0; b < shape.n; ++b) {
        tile.spm().read(out + uint64_t(b) * g.batch_stride(), result.data() + uint64_t(b) * g.batch_stride(),
                        g.batch_bytes());
      }
      convert_layout(result.data(), MemLayout::NCx, back.data(), MemLayout::NTensor, shape, f);
      std::vector<float> got(x.size());
      to_f32(f, back.data(), got.data(), int64_t(got.size()));
      expect_close(got, expected, f, "VuV_mul_loop " + std::string(format_name(f)) + " C=" + std::to_string(c));
    }
  }
}

TEST(Cgra, VuVMulLoopChecksItsCounts) {
  Chip chip(one_tile());
  Tile& tile = chip.tile(0);
  put(tile, 0, std::vector<float>(512, 1.0f), Format::FP32);
  using test::expect_error;
  expect_error(
      [&] {
        execute(tile, ArithVuVLoop{ArithOp::Mul, Format::FP32, 0, 0, 4096, 128, 32, 256, 64});
      },
      "CGRATensor_ArithOp_VuV_mul_loop.fp32 on tile 0: unit_elem_num = 32 (the loop form needs 64");
  expect_error(
      [&] {
        execute(tile, ArithVuVLoop{ArithOp::Mul, Format::FP32, 0, 0, 4096, 128, 64, 256, 64});
      },
      "full_src_elem_num / full_unit_elem_num = 256 / 64 differs from src_elem_num / unit_elem_num = 128 / 64");
  expect_error(
      [&] {
        execute(tile, ArithVuV{ArithOp::Mul, Format::FP32, 0, 0, 4096, 100, 64});
      },
      "src_elem_num 100 is not a multiple of unit_elem_num 64");
}

TEST(Cgra, UnaryMatchesReference) {
  Chip chip(one_tile());
  Tile& tile = chip.tile(0);
  test::Rng rng(5);
  const std::pair<cgra::UnaryOp, tg::UnaryOp> with_reference[] = {
      {cgra::UnaryOp::Abs, tg::UnaryOp::ABS},   {cgra::UnaryOp::Neg, tg::UnaryOp::NEG},
      {cgra::UnaryOp::Relu, tg::UnaryOp::RELU}, {cgra::UnaryOp::Gelu, tg::UnaryOp::GELU},
      {cgra::UnaryOp::Silu, tg::UnaryOp::SILU}, {cgra::UnaryOp::Sigmoid, tg::UnaryOp::SIGMOID},
      {cgra::UnaryOp::Tanh, tg::UnaryOp::TANH}, {cgra::UnaryOp::Exp, tg::UnaryOp::EXP},
      {cgra::UnaryOp::Sqrt, tg::UnaryOp::SQRT}, {cgra::UnaryOp::Rsqrt, tg::UnaryOp::RSQRT},
  };
  for (Format f : kFloatFormats) {
    for (int64_t n : kSizes) {
      for (const auto& [op, ref_op] : with_reference) {
        const bool positive = op == cgra::UnaryOp::Sqrt || op == cgra::UnaryOp::Rsqrt;
        const std::vector<float> x = put(tile, 0, test::random_values(rng, n, positive ? 0.01f : -6.0f, 6.0f), f);
        const UnaryV in{op, f, 0, 16384, n};
        execute(tile, in);
        Context ctx;
        const std::vector<float> ref = test::reference_result(unary(ctx, test::tensor_of(ctx, x, {n}), ref_op));
        expect_close(get(tile, 16384, n, f), ref, f, instruction_name(in) + " n=" + std::to_string(n));
      }
      // No reference op: log and recip against libm.
      const std::vector<float> x = put(tile, 0, test::random_values(rng, n, 0.05f, 8.0f), f);
      for (cgra::UnaryOp op : {cgra::UnaryOp::Log, cgra::UnaryOp::Recip}) {
        execute(tile, UnaryV{op, f, 0, 16384, n});
        std::vector<float> ref(x.size());
        for (size_t i = 0; i < x.size(); ++i) ref[i] = op == cgra::UnaryOp::Log ? std::log(x[i]) : 1.0f / x[i];
        expect_close(get(tile, 16384, n, f), ref, f, instruction_name(UnaryV{op, f}));
      }
    }
  }
}

TEST(Cgra, RelationalLogicalAndBit) {
  Chip chip(one_tile());
  Tile& tile = chip.tile(0);
  const std::vector<float> a = {1, 2, 3, 0, -1, 5};
  const std::vector<float> b = {1, 3, 2, 0, 0, -5};
  for (Format f : {Format::FP32, Format::BF16, Format::INT8, Format::INT32}) {
    put(tile, 0, a, f);
    put(tile, 64, b, f);
    const std::pair<CompareOp, bool (*)(float, float)> cmps[] = {{CompareOp::Eq, [](float x, float y) { return x == y; }},
                                                                 {CompareOp::Ne, [](float x, float y) { return x != y; }},
                                                                 {CompareOp::Lt, [](float x, float y) { return x < y; }},
                                                                 {CompareOp::Le, [](float x, float y) { return x <= y; }},
                                                                 {CompareOp::Gt, [](float x, float y) { return x > y; }},
                                                                 {CompareOp::Ge, [](float x, float y) { return x >= y; }}};
    for (const auto& [op, fn] : cmps) {
      execute(tile, CompareVV{op, f, 0, 64, 128, 6});
      execute(tile, CompareVS{op, f, 0, 2.0, 192, 6});
      const std::vector<float> vv = get(tile, 128, 6, f), vs = get(tile, 192, 6, f);
      for (size_t i = 0; i < a.size(); ++i) {
        EXPECT_EQ(vv[i], fn(a[i], b[i]) ? 1.0f : 0.0f) << instruction_name(CompareVV{op, f}) << " " << i;
        EXPECT_EQ(vs[i], fn(a[i], 2.0f) ? 1.0f : 0.0f) << instruction_name(CompareVS{op, f}) << " " << i;
      }
    }
    const std::pair<LogicOp, bool (*)(bool, bool)> logic[] = {{LogicOp::And, [](bool x, bool y) { return x && y; }},
                                                              {LogicOp::Or, [](bool x, bool y) { return x || y; }},
                                                              {LogicOp::Xor, [](bool x, bool y) { return x != y; }},
                                                              {LogicOp::Not, [](bool x, bool) { return !x; }}};
    for (const auto& [op, fn] : logic) {
      execute(tile, LogicVV{op, f, 0, 64, 128, 6});
      const std::vector<float> r = get(tile, 128, 6, f);
      for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(r[i], fn(a[i] != 0, b[i] != 0) ? 1.0f : 0.0f) << i;
    }
  }
  const std::vector<float> x = {5, -6, 127, 64, -128, 3};
  put(tile, 0, x, Format::INT8);
  put(tile, 64, {3, 1, 1, 2, 7, 0}, Format::INT8);
  execute(tile, BitVV{BitOp::And, Format::INT8, 0, 64, 128, 6});
  EXPECT_EQ(get(tile, 128, 6, Format::INT8), (std::vector<float>{1, 0, 1, 0, 0, 0}));
  execute(tile, BitVV{BitOp::Shl, Format::INT8, 0, 64, 128, 6});
  EXPECT_EQ(get(tile, 128, 6, Format::INT8), (std::vector<float>{40, -12, -2, 0, 0, 3}));
  execute(tile, BitVS{BitOp::Shr, Format::INT8, 0, 1, 128, 6});
  EXPECT_EQ(get(tile, 128, 6, Format::INT8), (std::vector<float>{2, -3, 63, 32, -64, 1}));
  execute(tile, BitVV{BitOp::Not, Format::INT8, 0, 0, 128, 6});
  EXPECT_EQ(get(tile, 128, 6, Format::INT8), (std::vector<float>{-6, 5, -128, -65, 127, -4}));
  test::expect_error(
      [&] {
        execute(tile, BitVV{BitOp::And, Format::FP32, 0, 64, 128, 6});
      },
      "CGRATensor_BitOp_VV_and.fp32 on tile 0: unsupported format fp32 (takes int8, int32)");
}

TEST(Cgra, ReduceMatchesReference) {
  Chip chip(one_tile());
  Tile& tile = chip.tile(0);
  test::Rng rng(6);
  for (Format f : kFloatFormats) {
    for (int64_t extent : {1, 31, 64, 129}) {
      const int64_t outer = 5;
      const std::vector<float> x = put(tile, 0, test::random_values(rng, outer * extent), f);
      // Rows (inner = 1): sum against the reference's sum_rows.
      execute(tile, ReduceTensor{ReduceOp::Sum, f, 0, 65536, outer, extent, 1});
      Context ctx;
      const std::vector<float> ref = test::reference_result(sum_rows(ctx, test::tensor_of(ctx, x, {extent, outer})));
      expect_close(get(tile, 65536, outer, f), ref, f, "sum rows", 1e-5 * extent);
      // Columns (outer = 1, inner = 5) and the other reductions against plain loops.
      for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Max, ReduceOp::Min}) {
        const int64_t inner = outer;
        execute(tile, ReduceTensor{op, f, 0, 65536, 1, extent, inner});
        std::vector<float> expect(static_cast<size_t>(inner));
        for (int64_t i = 0; i < inner; ++i) {
          double acc = x[size_t(i)];
          for (int64_t e = 1; e < extent; ++e) {
            const double v = x[size_t(e * inner + i)];
            acc = op == ReduceOp::Max ? std::max(acc, v) : op == ReduceOp::Min ? std::min(acc, v) : acc + v;
          }
          expect[size_t(i)] = float(op == ReduceOp::Mean ? acc / double(extent) : acc);
        }
        expect_close(get(tile, 65536, inner, f), expect, f, instruction_name(ReduceTensor{op, f}), 1e-5 * extent);
      }
    }
  }
}

TEST(Cgra, PoolMatchesReference) {
  Chip chip(one_tile());
  Tile& tile = chip.tile(0);
  test::Rng rng(7);
  for (PoolOp op : {PoolOp::Max, PoolOp::Avg}) {
    for (Format f : {Format::FP32, Format::FP16}) {
      const int64_t n = 2, h = 7, w = 6, c = 3;
      const std::vector<float> x = put(tile, 0, test::random_values(rng, n * h * w * c), f);
      const PoolTensor in{op, f, 0, 65536, n, h, w, c, 3, 2, 2, 2, 1, 0};
      execute(tile, in);
      // The reference pools [W, H, C, N]: the same values with C moved outside H and W.
      std::vector<float> whcn(x.size());
      for (int64_t b = 0; b < n; ++b)
        for (int64_t y = 0; y < h; ++y)
          for (int64_t xx = 0; xx < w; ++xx)
            for (int64_t ch = 0; ch < c; ++ch)
              whcn[size_t(((b * c + ch) * h + y) * w + xx)] = x[size_t(((b * h + y) * w + xx) * c + ch)];
      Context ctx;
      Pool2dParams p;
      p.op = op == PoolOp::Max ? tg::PoolOp::MAX : tg::PoolOp::AVG;
      p.k0 = 2, p.k1 = 3, p.s0 = 2, p.s1 = 2, p.p0 = 0, p.p1 = 1;
      Tensor* ref = pool_2d(ctx, test::tensor_of(ctx, whcn, {w, h, c, n}), p);
      const std::vector<float> r = test::reference_result(ref);
      const int64_t ow = ref->ne[0], oh = ref->ne[1];
      std::vector<float> expect(r.size());
      for (int64_t b = 0; b < n; ++b)
        for (int64_t y = 0; y < oh; ++y)
          for (int64_t xx = 0; xx < ow; ++xx)
            for (int64_t ch = 0; ch < c; ++ch)
              expect[size_t(((b * oh + y) * ow + xx) * c + ch)] = r[size_t(((b * c + ch) * oh + y) * ow + xx)];
      expect_close(get(tile, 65536, int64_t(expect.size()), f), expect, f, instruction_name(in));
    }
  }
}

TEST(Cgra, MoveFillTranspose) {
  Chip chip(one_tile());
  Tile& tile = chip.tile(0);
  test::Rng rng(8);
  const int64_t rows = 37, cols = 65;
  const std::vector<float> x = put(tile, 0, test::random_values(rng, rows * cols), Format::BF16);
  execute(tile, TransposeTensor{Format::BF16, 0, 65536, rows, cols});
  Context ctx;
  Tensor* ref = cont(ctx, transpose(ctx, test::tensor_of(ctx, x, {cols, rows})));
  expect_close(get(tile, 65536, rows * cols, Format::BF16), test::reference_result(ref), Format::BF16, "transpose");
  execute(tile, MoveV{Format::BF16, 65536, 0, rows * cols});
  EXPECT_EQ(get(tile, 0, rows * cols, Format::BF16), get(tile, 65536, rows * cols, Format::BF16));
  execute(tile, FillV{Format::FP16, 4096, 1.5, 9});
  EXPECT_EQ(get(tile, 4096, 9, Format::FP16), std::vector<float>(9, 1.5f));
}

TEST(Cgra, ConvertMatchesReferenceCopyAndRoundsAsAsked) {
  Chip chip(one_tile());
  Tile& tile = chip.tile(0);
  test::Rng rng(9);
  const int64_t n = 1000;
  const std::vector<float> x = put(tile, 0, test::random_values(rng, n, -70000.0f, 70000.0f), Format::FP32);
  // Nearest-even against the reference's f32 -> f16 / bf16 copy.
  for (const auto& [to, dtype] : {std::pair{Format::FP16, DType::F16}, std::pair{Format::BF16, DType::BF16}}) {
    execute(tile, ConvertV{Format::FP32, to, 0, 65536, n});
    Context ctx;
    Tensor* dst = ctx.new_tensor(dtype, {n});
    Tensor* copy = cpy(ctx, test::tensor_of(ctx, x, {n}), dst);
    reference::compute_node(*copy);
    std::vector<uint8_t> got(size_t(n) * 2);
    tile.spm().read(65536, got.data(), got.size());
    EXPECT_EQ(std::memcmp(got.data(), dst->data, got.size()), 0) << format_name(to);
  }
  // Directed modes bracket the value: down <= x <= up, both one step apart or equal to x.
  for (Format to : {Format::FP16, Format::BF16, Format::TF32}) {
    execute(tile, ConvertV{Format::FP32, to, 0, 65536, n, RoundMode::Down});
    const std::vector<float> down = get(tile, 65536, n, to);
    execute(tile, ConvertV{Format::FP32, to, 0, 65536, n, RoundMode::Up});
    const std::vector<float> up = get(tile, 65536, n, to);
    execute(tile, ConvertV{Format::FP32, to, 0, 65536, n, RoundMode::TowardZero});
    const std::vector<float> zero = get(tile, 65536, n, to);
    execute(tile, ConvertV{Format::FP32, to, 0, 65536, n, RoundMode::NearestEven});
    const std::vector<float> near = get(tile, 65536, n, to);
    for (int64_t i = 0; i < n; ++i) {
      const float v = x[size_t(i)];
      ASSERT_LE(down[size_t(i)], v) << format_name(to) << " " << v;
      ASSERT_GE(up[size_t(i)], v) << format_name(to) << " " << v;
      ASSERT_EQ(zero[size_t(i)], v < 0 ? up[size_t(i)] : down[size_t(i)]) << v;
      ASSERT_TRUE(near[size_t(i)] == up[size_t(i)] || near[size_t(i)] == down[size_t(i)]) << v;
      ASSERT_LE(std::fabs(near[size_t(i)] - v), std::fabs(up[size_t(i)] - down[size_t(i)]) / 2) << v;
      if (down[size_t(i)] != up[size_t(i)] && std::isfinite(up[size_t(i)]) && std::isfinite(down[size_t(i)])) {
        // Adjacent: nothing of the format lies between.
        ASSERT_EQ(round_to(to, (down[size_t(i)] + up[size_t(i)]) / 2, RoundMode::Down), down[size_t(i)]);
      }
    }
  }
  // Float -> int8 saturates; int8 -> fp32 is exact.
  put(tile, 0, {300.0f, -300.0f, 2.5f, -2.5f, 3.5f, 1.7f}, Format::FP32);
  execute(tile, ConvertV{Format::FP32, Format::INT8, 0, 4096, 6});
  EXPECT_EQ(get(tile, 4096, 6, Format::INT8), (std::vector<float>{127, -128, 2, -2, 4, 2}));
  execute(tile, ConvertV{Format::FP32, Format::INT8, 0, 4096, 6, RoundMode::NearestAway});
  EXPECT_EQ(get(tile, 4096, 6, Format::INT8), (std::vector<float>{127, -128, 3, -3, 4, 2}));
  execute(tile, ConvertV{Format::INT8, Format::FP32, 4096, 8192, 6});
  EXPECT_EQ(get(tile, 8192, 6, Format::FP32), (std::vector<float>{127, -128, 3, -3, 4, 2}));
}

}  // namespace
}  // namespace tg::sim
