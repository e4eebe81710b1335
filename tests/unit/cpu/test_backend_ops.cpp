// Every op, every dtype combination its builder accepts, a spread of shapes (sizes 1, primes,
// long rows, many rows, broadcasts) and non-contiguous sources, run on the cpu backend and checked
// against the reference backend (llama.cpp's test-backend-ops, as a table of GoogleTest cases).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "common/tensor_utils.h"
#include "cpu_backend_internal.h"
#include "tilegraph/backends.h"
#include "tilegraph/core/error.h"
#include "tilegraph/core/ops.h"
#include "tilegraph/cpu/cpu_backend.h"

namespace tg {
namespace {

using test::Layout;
using test::Rng;
using Shape = std::array<int64_t, 4>;

// NMSE bounds. Data movement is exact; f32 arithmetic differs from the double-accumulating
// reference only by rounding; anything passing through f16/bf16/q8_0 arithmetic may round
// intermediates to that precision (as ggml's vec_dot types do).
constexpr double kExact = 0.0;
constexpr double kElementwise = 1e-7;
constexpr double kRowReduction = 1e-6;
constexpr double kMatmulF32 = 1e-5;
constexpr double kLowPrecision = 5e-4;

struct OpCase {
  std::string name;
  Op op;
  double max_nmse;
  // Creates and fills the sources in `ctx` and returns the op's result. Called once per backend
  // with identically seeded generators, so every backend starts from the same bytes.
  std::function<Tensor*(Context&, Rng&)> build;
};

void PrintTo(const OpCase& c, std::ostream* out) { *out << c.name; }

// ---- naming -------------------------------------------------------------------------------

std::string dims(const Shape& ne) {
  int last = 3;
  while (last > 0 && ne[size_t(last)] == 1) --last;
  std::string s;
  for (int i = 0; i <= last; ++i) s += (i ? "x" : "") + std::to_string(ne[size_t(i)]);
  return s;
}

std::string tn(DType t) { return std::string(dtype_name(t)); }

std::string noncont(Layout layout) {
  return layout == Layout::kContiguous ? "" : "_noncont_" + std::string(test::layout_name(layout));
}

bool is_low_precision(DType t) { return t != DType::F32 && t != DType::I32; }

double arithmetic_bound(std::initializer_list<DType> types, double f32_bound) {
  return std::ranges::any_of(types, is_low_precision) ? kLowPrecision : f32_bound;
}

// ---- sources --------------------------------------------------------------------------------

Tensor* uniform(Context& ctx, Rng& rng, DType type, Shape ne, Layout layout = Layout::kContiguous, float lo = -1.0f,
                float hi = 1.0f) {
  Tensor* t = test::new_tensor(ctx, type, ne, layout);
  test::fill_uniform(*t, rng, lo, hi);
  return t;
}

Tensor* from_values(Context& ctx, DType type, Shape ne, const std::vector<float>& values) {
  Tensor* t = test::new_tensor(ctx, type, ne);
  test::write_f32(*t, values);
  return t;
}

enum class MaskKind {
  kNone,
  kRandom,    // scores in [-1, 1], about a quarter -inf; column 0 finite, so no row is fully masked
  kFullRows,  // as kRandom, but every third row entirely -inf (padding rows): results are zeros
  kCausal,    // row i sees columns 0..i (scores in [-1, 1]), the rest -inf: whole blocks of keys
              // hidden from some queries and not from others
};

std::string mask_name(MaskKind kind) {
  switch (kind) {
    case MaskKind::kFullRows: return "_fullrows";
    case MaskKind::kCausal: return "_causal";
    default: return "";
  }
}

Tensor* mask(Context& ctx, Rng& rng, DType type, Shape ne, MaskKind kind) {
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::bernoulli_distribution masked(0.25);
  std::vector<float> v(size_t(ne[0] * ne[1] * ne[2] * ne[3]));
  for (size_t i = 0; i < v.size(); ++i) {
    const size_t col = i % size_t(ne[0]), row = i / size_t(ne[0]);
    if (kind == MaskKind::kCausal) {
      v[i] = col > row ? -INFINITY : value(rng);
      continue;
    }
    const bool full = kind == MaskKind::kFullRows && row % 3 == 1;
    v[i] = full || (col != 0 && masked(rng)) ? -INFINITY : value(rng);
  }
  return from_values(ctx, type, ne, v);
}

// idx [n, s1, s2]: for each (s1, s2) slice, n distinct rows of [0, rows) in random order.
Tensor* distinct_rows(Context& ctx, Rng& rng, Shape ne, int64_t rows) {
  std::vector<float> v;
  std::vector<int> order(static_cast<size_t>(rows));
  for (int64_t s = 0; s < ne[1] * ne[2] * ne[3]; ++s) {
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    v.insert(v.end(), order.begin(), order.begin() + ne[0]);
  }
  return from_values(ctx, DType::I32, ne, v);
}

// ---- the table ----------------------------------------------------------------------------

class Table {
 public:
  void add(Op op, const std::string& detail, double max_nmse, std::function<Tensor*(Context&, Rng&)> build) {
    std::string name = std::string(op_name(op)) + "_" + detail;
    for (char& ch : name) {
      if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
    }
    if (!names_.insert(name).second) throw Error("backend-ops: duplicate case " + name);
    cases_.push_back({std::move(name), op, max_nmse, std::move(build)});
  }
  std::vector<OpCase> take() { return std::move(cases_); }

 private:
  std::vector<OpCase> cases_;
  std::set<std::string> names_;
};

const std::array kFloatTypes = {DType::F32, DType::F16, DType::BF16};
const std::array kAllTypes = {DType::F32, DType::F16, DType::BF16, DType::I32, DType::Q8_0};

void add_mul_mat(Table& t) {
  struct Dims {
    int64_t k, m, n;
    Shape a_batch, b_batch;  // only dims 2 and 3 are used
  };
  const std::vector<Dims> shapes = {
      {32, 1, 1, {1, 1, 1, 1}, {1, 1, 1, 1}},     {64, 7, 13, {1, 1, 1, 1}, {1, 1, 1, 1}},
      {96, 31, 61, {1, 1, 1, 1}, {1, 1, 1, 1}},   {64, 257, 129, {1, 1, 1, 1}, {1, 1, 1, 1}},
      {4096, 61, 1, {1, 1, 1, 1}, {1, 1, 1, 1}},  {64, 13, 7, {1, 1, 2, 1}, {1, 1, 6, 3}},
      {32, 16, 4, {1, 1, 3, 2}, {1, 1, 3, 2}},    {544, 137, 75, {1, 1, 1, 1}, {1, 1, 1, 1}},
      {64, 16, 4096, {1, 1, 1, 1}, {1, 1, 1, 1}},
  };
  // Odd K needs a plain-element a (q8_0 rows are whole 32-element blocks).
  const std::vector<Dims> odd_k = {{1, 7, 7, {1, 1, 1, 1}, {1, 1, 1, 1}},
                                   {61, 13, 31, {1, 1, 1, 1}, {1, 1, 1, 1}},
                                   {300, 131, 67, {1, 1, 1, 1}, {1, 1, 1, 1}}};
  struct NonCont {
    Dims d;
    Layout a, b;
  };
  const std::vector<NonCont> layouts = {
      {{64, 13, 7, {1, 1, 2, 1}, {1, 1, 6, 3}}, Layout::kPermuted, Layout::kPermuted},
      {{64, 31, 13, {1, 1, 1, 1}, {1, 1, 1, 1}}, Layout::kPaddedRows, Layout::kPaddedRows},
      {{64, 13, 9, {1, 1, 1, 1}, {1, 1, 1, 1}}, Layout::kContiguous, Layout::kTransposed},
      {{61, 13, 9, {1, 1, 1, 1}, {1, 1, 1, 1}}, Layout::kTransposed, Layout::kContiguous},
  };
  for (DType at : kAllTypes) {
    if (at == DType::I32) continue;
    for (DType bt : kFloatTypes) {
      const double bound = arithmetic_bound({at, bt}, kMatmulF32);
      auto add = [&](const Dims& d, Layout la, Layout lb) {
        const Shape a_ne = {d.k, d.m, d.a_batch[2], d.a_batch[3]};
        const Shape b_ne = {d.k, d.n, d.b_batch[2], d.b_batch[3]};
        std::string name = tn(at) + "_" + tn(bt) + "_" + dims(a_ne) + "_" + dims(b_ne);
        if (la != Layout::kContiguous) name += "_a" + noncont(la);
        if (lb != Layout::kContiguous) name += "_b" + noncont(lb);
        t.add(Op::MUL_MAT, name, bound, [=](Context& ctx, Rng& rng) {
          Tensor* a = uniform(ctx, rng, at, a_ne, la);
          return mul_mat(ctx, a, uniform(ctx, rng, bt, b_ne, lb));
        });
      };
      for (const Dims& d : shapes) add(d, Layout::kContiguous, Layout::kContiguous);
      if (at != DType::Q8_0) {
        for (const Dims& d : odd_k) add(d, Layout::kContiguous, Layout::kContiguous);
      }
      for (const NonCont& nc : layouts) {
        const bool splits_blocks = nc.a == Layout::kTransposed || nc.d.k % 32 != 0;
        if (at == DType::Q8_0 && splits_blocks) continue;
        add(nc.d, nc.a, nc.b);
      }
    }
  }
}

void add_binary(Table& t) {
  struct Pair {
    Shape a, b;
    Layout la = Layout::kContiguous, lb = Layout::kContiguous;
  };
  // Every type combination on these...
  const std::vector<Pair> all_types = {
      {{61, 13, 1, 1}, {61, 13, 1, 1}},
      {{61, 13, 3, 2}, {61, 1, 3, 1}},
  };
  // ...and matching types on the rest.
  const std::vector<Pair> same_type = {
      {{1, 1, 1, 1}, {1, 1, 1, 1}},
      {{7, 4096, 1, 1}, {7, 4096, 1, 1}},
      {{4096, 3, 1, 1}, {4096, 1, 1, 1}},
      {{31, 13, 3, 2}, {1, 13, 1, 2}},
      {{31, 13, 3, 2}, {1, 1, 1, 1}},
      {{0, 7, 1, 1}, {1, 7, 1, 1}},
      {{61, 13, 3, 2}, {61, 13, 3, 2}, Layout::kTransposed, Layout::kPermuted},
      {{61, 13, 3, 2}, {61, 1, 3, 1}, Layout::kPaddedRows, Layout::kPaddedRows},
      {{13, 61, 2, 1}, {13, 61, 1, 1}, Layout::kPermuted, Layout::kTransposed},
  };
  using Builder = Tensor* (*)(Context&, Tensor*, Tensor*);
  const std::array<std::pair<Op, Builder>, 4> ops = {{{Op::ADD, add}, {Op::SUB, sub}, {Op::MUL, mul}, {Op::DIV, div}}};
  for (const auto& [op, build] : ops) {
    // Divisors stay away from zero so that the quotients are well conditioned.
    const float b_lo = op == Op::DIV ? 0.5f : -1.0f;
    auto add_case = [&, op = op, build = build](DType at, DType bt, const Pair& p) {
      std::string name = tn(at) + "_" + tn(bt) + "_" + dims(p.a) + "_" + dims(p.b);
      if (p.la != Layout::kContiguous) name += "_a" + noncont(p.la);
      if (p.lb != Layout::kContiguous) name += "_b" + noncont(p.lb);
      t.add(op, name, arithmetic_bound({at}, kElementwise), [=](Context& ctx, Rng& rng) {
        Tensor* a = uniform(ctx, rng, at, p.a, p.la);
        return build(ctx, a, uniform(ctx, rng, bt, p.b, p.lb, b_lo, 1.5f));
      });
    };
    for (DType at : kFloatTypes) {
      for (DType bt : kFloatTypes) {
        for (const Pair& p : all_types) add_case(at, bt, p);
      }
      for (const Pair& p : same_type) add_case(at, at, p);
    }
  }
}

void add_scale(Table& t) {
  for (DType type : kFloatTypes) {
    for (const auto& [ne, layout, s, bias] :
         std::vector<std::tuple<Shape, Layout, float, float>>{{{1, 1, 1, 1}, Layout::kContiguous, 2.0f, 0.0f},
                                                              {{61, 13, 3, 1}, Layout::kContiguous, -0.5f, 0.25f},
                                                              {{4096, 5, 1, 1}, Layout::kContiguous, 0.125f, 0.0f},
                                                              {{31, 7, 3, 2}, Layout::kTransposed, 3.0f, -1.0f},
                                                              {{31, 7, 3, 2}, Layout::kPaddedRows, 3.0f, -1.0f}}) {
      const std::string name = tn(type) + "_" + dims(ne) + "_s" + std::to_string(int(s * 1000)) + "_b" +
                               std::to_string(int(bias * 1000)) + noncont(layout);
      t.add(Op::SCALE, name, arithmetic_bound({type}, kElementwise),
            [=, ne = ne, layout = layout, s = s, bias = bias](Context& ctx, Rng& rng) {
              return scale(ctx, uniform(ctx, rng, type, ne, layout), s, bias);
            });
    }
  }
}

void add_unary(Table& t) {
  const std::vector<std::pair<Shape, Layout>> shapes = {
      {{1, 1, 1, 1}, Layout::kContiguous},    {{61, 13, 1, 1}, Layout::kContiguous},
      {{4096, 3, 1, 1}, Layout::kContiguous}, {{31, 7, 3, 2}, Layout::kTransposed},
      {{31, 7, 3, 2}, Layout::kPermuted},
  };
  for (int u = 0; u < kUnaryOpCount; ++u) {
    const auto op = UnaryOp(u);
    float lo = -4.0f, hi = 4.0f;
    if (op == UnaryOp::SQRT || op == UnaryOp::RSQRT) lo = 0.05f;
    for (DType type : kFloatTypes) {
      for (const auto& [ne, layout] : shapes) {
        const std::string name = std::string(unary_op_name(op)) + "_" + tn(type) + "_" + dims(ne) + noncont(layout);
        t.add(Op::UNARY, name, arithmetic_bound({type}, kElementwise),
              [=, ne = ne, layout = layout](Context& ctx, Rng& rng) {
                return unary(ctx, uniform(ctx, rng, type, ne, layout, lo, hi), op);
              });
      }
    }
    // Far outside the usual range: exp overflows to inf, tanh/sigmoid/gelu saturate.
    t.add(Op::UNARY, std::string(unary_op_name(op)) + "_f32_1000_range100", kElementwise, [=](Context& ctx, Rng& rng) {
      return unary(
          ctx, uniform(ctx, rng, DType::F32, {1000, 1, 1, 1}, Layout::kContiguous, lo > 0.0f ? 0.0f : -100.0f, 100.0f),
          op);
    });
  }
}

void add_glu(Table& t) {
  const std::vector<std::pair<Shape, Layout>> shapes = {
      {{2, 1, 1, 1}, Layout::kContiguous},
      {{122, 7, 1, 1}, Layout::kContiguous},
      {{26, 3, 2, 1}, Layout::kPermuted},
      {{26, 5, 1, 1}, Layout::kPaddedRows},
  };
  for (GluOp op : {GluOp::SWIGLU, GluOp::GEGLU}) {
    for (DType type : kFloatTypes) {
      for (const auto& [ne, layout] : shapes) {
        const double bound = arithmetic_bound({type}, kElementwise);
        const std::string base = std::string(glu_op_name(op)) + "_" + tn(type) + "_" + dims(ne);
        for (bool swapped : {false, true}) {
          t.add(Op::GLU, base + (swapped ? "_swapped" : "") + noncont(layout), bound,
                [=, ne = ne, layout = layout](Context& ctx, Rng& rng) {
                  return glu(ctx, uniform(ctx, rng, type, ne, layout, -4.0f, 4.0f), op, swapped);
                });
        }
        const Shape half = {ne[0] / 2, ne[1], ne[2], ne[3]};
        t.add(Op::GLU, base + "_split" + noncont(layout), bound, [=, layout = layout](Context& ctx, Rng& rng) {
          Tensor* a = uniform(ctx, rng, type, half, layout, -4.0f, 4.0f);
          return glu_split(ctx, a, uniform(ctx, rng, type, half, Layout::kContiguous, -4.0f, 4.0f), op);
        });
      }
    }
  }
}

void add_norms(Table& t) {
  const std::vector<std::pair<Shape, Layout>> shapes = {
      {{1, 1, 1, 1}, Layout::kContiguous},    {{61, 13, 1, 1}, Layout::kContiguous},
      {{4096, 5, 1, 1}, Layout::kContiguous}, {{7, 4096, 1, 1}, Layout::kContiguous},
      {{31, 7, 3, 2}, Layout::kPermuted},     {{31, 7, 3, 2}, Layout::kPaddedRows},
      {{31, 7, 3, 2}, Layout::kTransposed},
  };
  for (Op op : {Op::NORM, Op::RMS_NORM}) {
    t.add(op, "f32_4096x3_offset100", kRowReduction, [=](Context& ctx, Rng& rng) {
      Tensor* a = uniform(ctx, rng, DType::F32, {4096, 3, 1, 1}, Layout::kContiguous, 100.0f, 101.0f);
      return op == Op::NORM ? norm(ctx, a, 1e-5f) : rms_norm(ctx, a, 1e-6f);
    });
    for (DType type : kFloatTypes) {
      for (const auto& [ne, layout] : shapes) {
        t.add(op, tn(type) + "_" + dims(ne) + noncont(layout), arithmetic_bound({type}, kRowReduction),
              [=, ne = ne, layout = layout](Context& ctx, Rng& rng) {
                Tensor* a = uniform(ctx, rng, type, ne, layout, -2.0f, 3.0f);
                return op == Op::NORM ? norm(ctx, a, 1e-5f) : rms_norm(ctx, a, 1e-6f);
              });
      }
    }
  }
}

void add_soft_max(Table& t) {
  struct Variant {
    Shape a;
    Layout layout;
    MaskKind mask_kind;
    Shape mask;
    float scale, max_bias;
    float range = 4.0f;  // inputs in [-range, range]
  };
  const std::vector<Variant> variants = {
      {{1, 1, 1, 1}, Layout::kContiguous, MaskKind::kNone, {}, 1.0f, 0.0f},
      {{61, 13, 1, 1}, Layout::kContiguous, MaskKind::kNone, {}, 0.125f, 0.0f},
      {{4096, 3, 1, 1}, Layout::kContiguous, MaskKind::kNone, {}, 1.0f, 0.0f},
      {{61, 13, 1, 1}, Layout::kContiguous, MaskKind::kNone, {}, 10.0f, 0.0f, 100.0f},
      {{61, 13, 4, 1}, Layout::kContiguous, MaskKind::kRandom, {61, 13, 1, 1}, 0.125f, 0.0f},
      {{32, 7, 4, 3}, Layout::kContiguous, MaskKind::kRandom, {32, 16, 4, 1}, 1.0f, 0.0f},
      {{61, 13, 8, 1}, Layout::kContiguous, MaskKind::kRandom, {61, 13, 1, 1}, 0.5f, 8.0f},
      {{130, 9, 2, 1}, Layout::kContiguous, MaskKind::kFullRows, {130, 9, 1, 1}, 1.0f, 0.0f},
      {{31, 7, 3, 2}, Layout::kPermuted, MaskKind::kRandom, {31, 7, 3, 1}, 1.0f, 0.0f},
      {{31, 7, 3, 2}, Layout::kTransposed, MaskKind::kNone, {}, 1.0f, 0.0f},
  };
  for (DType type : kFloatTypes) {
    for (const Variant& v : variants) {
      for (DType mt : {DType::F32, DType::F16}) {
        const bool masked = v.mask_kind != MaskKind::kNone;
        if (!masked && mt != DType::F32) continue;
        std::string name = tn(type) + "_" + dims(v.a);
        if (masked) name += "_mask_" + tn(mt) + "_" + dims(v.mask) + mask_name(v.mask_kind);
        name += "_scale" + std::to_string(int(v.scale * 1000));
        if (v.max_bias > 0.0f) name += "_alibi";
        if (v.range > 4.0f) name += "_range" + std::to_string(int(v.range));
        t.add(Op::SOFT_MAX, name + noncont(v.layout), arithmetic_bound({type}, kRowReduction),
              [=](Context& ctx, Rng& rng) {
                Tensor* a = uniform(ctx, rng, type, v.a, v.layout, -v.range, v.range);
                Tensor* m = masked ? mask(ctx, rng, mt, v.mask, v.mask_kind) : nullptr;
                return soft_max(ctx, a, m, v.scale, v.max_bias);
              });
      }
    }
  }
}

void add_rope(Table& t) {
  struct Variant {
    std::string name;
    Shape a;  // [head_dim, n_head, n_tokens]
    Layout layout;
    int32_t n_dims;
    bool freq_factors;
    bool yarn;
  };
  const std::vector<Variant> variants = {
      {"", {64, 4, 7, 1}, Layout::kContiguous, 64, false, false},
      {"", {128, 2, 1, 1}, Layout::kContiguous, 128, false, false},
      {"", {2, 1, 1, 1}, Layout::kContiguous, 2, false, false},
      {"partial", {80, 3, 13, 1}, Layout::kContiguous, 32, false, false},
      {"freq_factors", {64, 4, 7, 1}, Layout::kContiguous, 64, true, false},
      {"yarn", {64, 4, 7, 1}, Layout::kContiguous, 64, false, true},
      {"", {64, 4, 7, 1}, Layout::kPermuted, 64, false, false},
      {"", {64, 4, 7, 1}, Layout::kPaddedRows, 64, false, false},
      {"longctx", {128, 2, 5, 1}, Layout::kContiguous, 128, false, false},
  };
  for (DType type : {DType::F32, DType::F16}) {
    for (RopeMode mode : {RopeMode::NORMAL, RopeMode::NEOX}) {
      for (const Variant& v : variants) {
        std::string name = tn(type) + (mode == RopeMode::NEOX ? "_neox_" : "_normal_") + dims(v.a) + "_ndims" +
                           std::to_string(v.n_dims);
        if (!v.name.empty()) name += "_" + v.name;
        // Angles are pos * freq with pos up to 4096 (128 Ki for longctx): the reference evaluates
        // them in double, a backend may in f32, which moves results by more than rounding.
        t.add(Op::ROPE, name + noncont(v.layout), arithmetic_bound({type}, kRowReduction), [=](Context& ctx, Rng& rng) {
          Tensor* a = uniform(ctx, rng, type, v.a, v.layout);
          const float max_pos = v.name == "longctx" ? 131072.0f : 4096.0f;
          Tensor* pos = uniform(ctx, rng, DType::I32, {v.a[2], 1, 1, 1}, Layout::kContiguous, 0.0f, max_pos);
          RopeParams p;
          p.n_dims = v.n_dims;
          p.mode = mode;
          if (v.yarn) {
            p.n_ctx_orig = 512;
            p.freq_scale = 0.25f;
            p.ext_factor = 1.0f;
          }
          Tensor* ff = v.freq_factors
                           ? uniform(ctx, rng, DType::F32, {v.n_dims / 2, 1, 1, 1}, Layout::kContiguous, 1.0f, 8.0f)
                           : nullptr;
          return rope(ctx, a, pos, p, ff);
        });
      }
    }
  }
}

void add_get_rows(Table& t) {
  struct Variant {
    Shape a;  // [ne0, rows, A2, A3]
    int64_t n;
    Layout a_layout, idx_layout;
  };
  const std::vector<Variant> variants = {
      {{32, 1, 1, 1}, 1, Layout::kContiguous, Layout::kContiguous},
      {{64, 13, 1, 1}, 7, Layout::kContiguous, Layout::kContiguous},
      {{4096, 5, 1, 1}, 9, Layout::kContiguous, Layout::kContiguous},
      {{32, 61, 3, 2}, 5, Layout::kContiguous, Layout::kContiguous},
      {{64, 13, 3, 2}, 4, Layout::kPermuted, Layout::kPaddedRows},
      {{64, 13, 1, 1}, 4, Layout::kPaddedRows, Layout::kContiguous},
  };
  for (DType type : kAllTypes) {
    for (const Variant& v : variants) {
      std::string name = tn(type) + "_" + dims(v.a) + "_n" + std::to_string(v.n);
      if (v.a_layout != Layout::kContiguous) name += "_a" + noncont(v.a_layout);
      if (v.idx_layout != Layout::kContiguous) name += "_idx" + noncont(v.idx_layout);
      // Duplicate indices are allowed and used here: rows are read, never written, twice.
      t.add(Op::GET_ROWS, name, kExact, [=](Context& ctx, Rng& rng) {
        Tensor* a = uniform(ctx, rng, type, v.a, v.a_layout, -100.0f, 100.0f);
        Tensor* idx = uniform(ctx, rng, DType::I32, {v.n, v.a[2], v.a[3], 1}, v.idx_layout, 0.0f, float(v.a[1]));
        return get_rows(ctx, a, idx);
      });
    }
  }
}

void add_set_rows(Table& t) {
  struct Variant {
    Shape dst;
    int64_t n;
    Shape idx_batch;  // dims 1 and 2 of idx
    Layout dst_layout, src_layout;
  };
  const std::vector<Variant> variants = {
      {{32, 1, 1, 1}, 1, {1, 1, 1, 1}, Layout::kContiguous, Layout::kContiguous},
      {{64, 13, 1, 1}, 5, {1, 1, 1, 1}, Layout::kContiguous, Layout::kContiguous},
      {{4096, 7, 1, 1}, 3, {1, 1, 1, 1}, Layout::kContiguous, Layout::kContiguous},
      {{32, 17, 3, 2}, 4, {1, 3, 2, 1}, Layout::kContiguous, Layout::kContiguous},
      {{32, 17, 3, 2}, 4, {1, 1, 1, 1}, Layout::kContiguous, Layout::kPermuted},
      {{64, 13, 2, 1}, 6, {1, 2, 1, 1}, Layout::kPaddedRows, Layout::kPaddedRows},
  };
  for (DType type : {DType::F32, DType::F16, DType::BF16, DType::Q8_0}) {
    for (const Variant& v : variants) {
      std::string name = tn(type) + "_" + dims(v.dst) + "_n" + std::to_string(v.n) + "_idx" +
                         dims({v.n, v.idx_batch[1], v.idx_batch[2], 1});
      if (v.dst_layout != Layout::kContiguous) name += "_dst" + noncont(v.dst_layout);
      if (v.src_layout != Layout::kContiguous) name += "_src" + noncont(v.src_layout);
      // Indices are distinct within each slice, so the result does not depend on write order.
      t.add(Op::SET_ROWS, name, type == DType::Q8_0 ? kLowPrecision : kExact, [=](Context& ctx, Rng& rng) {
        Tensor* dst = uniform(ctx, rng, type, v.dst, v.dst_layout);
        Tensor* src = uniform(ctx, rng, DType::F32, {v.dst[0], v.n, v.dst[2], v.dst[3]}, v.src_layout, -2.0f, 2.0f);
        Tensor* idx = distinct_rows(ctx, rng, {v.n, v.idx_batch[1], v.idx_batch[2], 1}, v.dst[1]);
        return set_rows(ctx, dst, src, idx);
      });
    }
  }
}

void add_cpy_cont(Table& t) {
  struct Variant {
    Shape a, b;
    Layout la, lb;
  };
  const std::vector<Variant> variants = {
      {{64, 7, 1, 1}, {64, 7, 1, 1}, Layout::kContiguous, Layout::kContiguous},
      {{32, 6, 1, 1}, {64, 3, 1, 1}, Layout::kContiguous, Layout::kContiguous},
      {{4096, 3, 1, 1}, {4096, 3, 1, 1}, Layout::kContiguous, Layout::kContiguous},
      {{64, 13, 3, 2}, {64, 13, 3, 2}, Layout::kPermuted, Layout::kContiguous},
      {{64, 13, 3, 1}, {64, 13, 3, 1}, Layout::kTransposed, Layout::kPaddedRows},
      {{32, 7, 3, 2}, {32, 7, 3, 2}, Layout::kPaddedRows, Layout::kPermuted},
  };
  auto splits_blocks = [](DType type, const Shape& ne, Layout layout) {
    return type == DType::Q8_0 && (layout == Layout::kTransposed || ne[0] % 32 != 0);
  };
  std::vector<std::pair<DType, DType>> pairs;
  for (DType a : {DType::F32, DType::F16, DType::BF16, DType::Q8_0}) {
    for (DType b : {DType::F32, DType::F16, DType::BF16, DType::Q8_0}) pairs.emplace_back(a, b);
  }
  pairs.emplace_back(DType::I32, DType::I32);
  for (const auto& [at, bt] : pairs) {
    for (const Variant& v : variants) {
      if (splits_blocks(at, v.a, v.la) || splits_blocks(bt, v.b, v.lb)) continue;
      std::string name = tn(at) + "_" + tn(bt) + "_" + dims(v.a) + "_" + dims(v.b);
      if (v.la != Layout::kContiguous) name += "_a" + noncont(v.la);
      if (v.lb != Layout::kContiguous) name += "_b" + noncont(v.lb);
      // Conversions round to nearest even on every backend; only quantizing has latitude.
      const double bound = bt == DType::Q8_0 && at != DType::Q8_0 ? kLowPrecision : kExact;
      t.add(Op::CPY, name, bound, [=, at = at, bt = bt](Context& ctx, Rng& rng) {
        Tensor* a = uniform(ctx, rng, at, v.a, v.la, -50.0f, 50.0f);
        return cpy(ctx, a, uniform(ctx, rng, bt, v.b, v.lb));
      });
    }
  }
  // f16 overflow to inf and f16 subnormals; bf16 keeps f32's range.
  const std::vector<std::tuple<DType, float, std::string>> edges = {
      {DType::F16, 1e5f, "overflow"}, {DType::F16, 1e-4f, "subnormal"}, {DType::BF16, 1e30f, "huge"}};
  for (const auto& [bt, range, what] : edges) {
    t.add(Op::CPY, "f32_" + tn(bt) + "_4096x3_" + what, kExact, [=, bt = bt, range = range](Context& ctx, Rng& rng) {
      Tensor* a = uniform(ctx, rng, DType::F32, {4096, 3, 1, 1}, Layout::kContiguous, -range, range);
      return cpy(ctx, a, uniform(ctx, rng, bt, {4096, 3, 1, 1}));
    });
  }
  for (DType type : kAllTypes) {
    for (const Variant& v : variants) {
      if (v.a != v.b || splits_blocks(type, v.a, v.la)) continue;
      t.add(Op::CONT, tn(type) + "_" + dims(v.a) + noncont(v.la), kExact,
            [=](Context& ctx, Rng& rng) { return cont(ctx, uniform(ctx, rng, type, v.a, v.la, -50.0f, 50.0f)); });
    }
  }
}

// The 4- to 6-bit types (q8_0 has its cases above, with every other type): both backends
// dequantise their weights to the same f32 values (the core's bits) and round the activations to
// the same 8-bit values (quant.h), so matmuls differ only by f32 accumulation and data movement is
// exact. Shapes are in blocks (32 or 256 elements along
// K), with M = 1, primes for M and N, N on both sides of the matrix-vector limit (8), broadcast
// batches and the views a quantized operand can be (whole blocks along dim 0).
void add_quantized(Table& t) {
  const std::array types = {DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::Q4_K, DType::Q5_K, DType::Q6_K};
  struct Dims {
    int64_t k_blocks, m, n;
    Shape a_batch, b_batch;
  };
  const std::vector<Dims> shapes = {
      {1, 1, 1, {1, 1, 1, 1}, {1, 1, 1, 1}},   {1, 7, 13, {1, 1, 1, 1}, {1, 1, 1, 1}},
      {3, 31, 8, {1, 1, 1, 1}, {1, 1, 1, 1}},  {3, 61, 5, {1, 1, 1, 1}, {1, 1, 1, 1}},
      {5, 137, 1, {1, 1, 1, 1}, {1, 1, 1, 1}}, {5, 13, 61, {1, 1, 1, 1}, {1, 1, 1, 1}},
      {2, 13, 7, {1, 1, 2, 1}, {1, 1, 6, 3}},
  };
  struct NonCont {
    Dims d;
    Layout a, b;
  };
  const std::vector<NonCont> layouts = {
      {{2, 13, 7, {1, 1, 2, 1}, {1, 1, 6, 3}}, Layout::kPermuted, Layout::kPermuted},
      {{2, 31, 3, {1, 1, 1, 1}, {1, 1, 1, 1}}, Layout::kPaddedRows, Layout::kPaddedRows},
      {{2, 31, 13, {1, 1, 1, 1}, {1, 1, 1, 1}}, Layout::kPaddedRows, Layout::kContiguous},
      {{2, 13, 9, {1, 1, 1, 1}, {1, 1, 1, 1}}, Layout::kContiguous, Layout::kTransposed},
  };
  for (DType qt : types) {
    const int64_t block = int64_t(dtype_traits(qt).block_size);
    auto add_mm = [&](const Dims& d, DType bt, Layout la, Layout lb) {
      const Shape a_ne = {d.k_blocks * block, d.m, d.a_batch[2], d.a_batch[3]};
      const Shape b_ne = {d.k_blocks * block, d.n, d.b_batch[2], d.b_batch[3]};
      std::string name = tn(qt) + "_" + tn(bt) + "_" + dims(a_ne) + "_" + dims(b_ne);
      if (la != Layout::kContiguous) name += "_a" + noncont(la);
      if (lb != Layout::kContiguous) name += "_b" + noncont(lb);
      t.add(Op::MUL_MAT, name, kMatmulF32, [=](Context& ctx, Rng& rng) {
        Tensor* a = uniform(ctx, rng, qt, a_ne, la);
        return mul_mat(ctx, a, uniform(ctx, rng, bt, b_ne, lb));
      });
    };
    for (const Dims& d : shapes) add_mm(d, DType::F32, Layout::kContiguous, Layout::kContiguous);
    add_mm({16, 61, 1, {1, 1, 1, 1}, {1, 1, 1, 1}}, DType::F32, Layout::kContiguous, Layout::kContiguous);
    add_mm(shapes[2], DType::F16, Layout::kContiguous, Layout::kContiguous);
    add_mm(shapes[5], DType::BF16, Layout::kContiguous, Layout::kContiguous);
    for (const NonCont& nc : layouts) add_mm(nc.d, DType::F32, nc.a, nc.b);

    struct RowsVariant {
      Shape a;
      int64_t n;
      Layout a_layout, idx_layout;
    };
    for (const RowsVariant& v :
         std::vector<RowsVariant>{{{block, 1, 1, 1}, 1, Layout::kContiguous, Layout::kContiguous},
                                  {{2 * block, 13, 1, 1}, 7, Layout::kContiguous, Layout::kContiguous},
                                  {{block, 61, 3, 2}, 5, Layout::kContiguous, Layout::kContiguous},
                                  {{2 * block, 13, 3, 2}, 4, Layout::kPermuted, Layout::kPaddedRows},
                                  {{3 * block, 13, 1, 1}, 4, Layout::kPaddedRows, Layout::kContiguous}}) {
      std::string name = tn(qt) + "_" + dims(v.a) + "_n" + std::to_string(v.n);
      if (v.a_layout != Layout::kContiguous) name += "_a" + noncont(v.a_layout);
      if (v.idx_layout != Layout::kContiguous) name += "_idx" + noncont(v.idx_layout);
      t.add(Op::GET_ROWS, name, kExact, [=](Context& ctx, Rng& rng) {
        Tensor* a = uniform(ctx, rng, qt, v.a, v.a_layout, -100.0f, 100.0f);
        Tensor* idx = uniform(ctx, rng, DType::I32, {v.n, v.a[2], v.a[3], 1}, v.idx_layout, 0.0f, float(v.a[1]));
        return get_rows(ctx, a, idx);
      });
    }

    // Quantizing into the destination: both backends use the core's quantizer per block.
    struct SetVariant {
      Shape dst;
      int64_t n;
      Shape idx_batch;
      Layout dst_layout;
    };
    for (const SetVariant& v : std::vector<SetVariant>{{{block, 13, 1, 1}, 5, {1, 1, 1, 1}, Layout::kContiguous},
                                                       {{2 * block, 17, 3, 2}, 4, {1, 3, 2, 1}, Layout::kContiguous},
                                                       {{block, 13, 2, 1}, 6, {1, 2, 1, 1}, Layout::kPaddedRows}}) {
      std::string name = tn(qt) + "_" + dims(v.dst) + "_n" + std::to_string(v.n) + "_idx" +
                         dims({v.n, v.idx_batch[1], v.idx_batch[2], 1}) + noncont(v.dst_layout);
      t.add(Op::SET_ROWS, name, kExact, [=](Context& ctx, Rng& rng) {
        Tensor* dst = uniform(ctx, rng, qt, v.dst, v.dst_layout);
        Tensor* src =
            uniform(ctx, rng, DType::F32, {v.dst[0], v.n, v.dst[2], v.dst[3]}, Layout::kContiguous, -2.0f, 2.0f);
        Tensor* idx = distinct_rows(ctx, rng, {v.n, v.idx_batch[1], v.idx_batch[2], 1}, v.dst[1]);
        return set_rows(ctx, dst, src, idx);
      });
    }

    struct CpyVariant {
      DType from, to;
      Shape a, b;
      Layout la, lb;
    };
    for (const CpyVariant& v : std::vector<CpyVariant>{
             {DType::F32, qt, {block, 7, 1, 1}, {block, 7, 1, 1}, Layout::kContiguous, Layout::kContiguous},
             {DType::F32, qt, {2 * block, 5, 3, 1}, {2 * block, 5, 3, 1}, Layout::kTransposed, Layout::kPermuted},
             {qt, DType::F32, {2 * block, 5, 3, 1}, {2 * block, 5, 3, 1}, Layout::kPermuted, Layout::kTransposed},
             {qt, DType::F16, {block, 7, 1, 1}, {block, 7, 1, 1}, Layout::kPaddedRows, Layout::kContiguous},
             {qt, qt, {block, 7, 3, 1}, {block, 7, 3, 1}, Layout::kPermuted, Layout::kPaddedRows},
             // Rows of different lengths: elements (or whole blocks) walked one by one.
             {qt, DType::F32, {block, 6, 1, 1}, {2 * block, 3, 1, 1}, Layout::kContiguous, Layout::kContiguous},
             {qt, qt, {2 * block, 3, 1, 1}, {block, 6, 1, 1}, Layout::kContiguous, Layout::kContiguous}}) {
      std::string name = tn(v.from) + "_" + tn(v.to) + "_" + dims(v.a) + "_" + dims(v.b);
      if (v.la != Layout::kContiguous) name += "_a" + noncont(v.la);
      if (v.lb != Layout::kContiguous) name += "_b" + noncont(v.lb);
      t.add(Op::CPY, name, kExact, [=](Context& ctx, Rng& rng) {
        Tensor* a = uniform(ctx, rng, v.from, v.a, v.la, -50.0f, 50.0f);
        return cpy(ctx, a, uniform(ctx, rng, v.to, v.b, v.lb));
      });
    }
    t.add(Op::CONT, tn(qt) + "_" + dims({2 * block, 13, 3, 2}) + noncont(Layout::kPermuted), kExact,
          [=](Context& ctx, Rng& rng) {
            return cont(ctx, uniform(ctx, rng, qt, {2 * block, 13, 3, 2}, Layout::kPermuted));
          });
  }
}

// Views execute nothing; these check that both backends accept them and that the result reads
// the right bytes of the source.
void add_views(Table& t) {
  for (DType type : {DType::F32, DType::F16, DType::Q8_0}) {
    const std::string ty = tn(type);
    auto src = [type](Context& ctx, Rng& rng, Shape ne) { return uniform(ctx, rng, type, ne); };
    t.add(Op::VIEW, ty + "_2d_rows", kExact, [=](Context& ctx, Rng& rng) {
      Tensor* a = src(ctx, rng, {64, 13, 1, 1});
      return view_2d(ctx, a, 32, 5, a->nb[1] * 2, a->nb[1]);
    });
    t.add(Op::VIEW, ty + "_4d", kExact, [=](Context& ctx, Rng& rng) {
      Tensor* a = src(ctx, rng, {64, 6, 4, 2});
      return view_4d(ctx, a, 64, 3, 2, 2, a->nb[1], a->nb[2] * 2, a->nb[3], a->nb[1] * 3);
    });
    t.add(Op::RESHAPE, ty + "_64x6x4_to_128x12x2", kExact, [=](Context& ctx, Rng& rng) {
      return reshape(ctx, src(ctx, rng, {64, 6, 4, 1}), {128, 12, 1, 1});
    });
    t.add(Op::PERMUTE, ty + "_0213", kExact, [=](Context& ctx, Rng& rng) {
      return permute(ctx, src(ctx, rng, {32, 5, 3, 2}), 0, 2, 1, 3);
    });
    if (type != DType::Q8_0) {
      t.add(Op::PERMUTE, ty + "_2013", kExact, [=](Context& ctx, Rng& rng) {
        return permute(ctx, src(ctx, rng, {7, 5, 3, 2}), 2, 0, 1, 3);
      });
      t.add(Op::TRANSPOSE, ty + "_61x13", kExact, [=](Context& ctx, Rng& rng) {
        return transpose(ctx, src(ctx, rng, {61, 13, 1, 1}));
      });
    }
  }
}

void add_flash_attn(Table& t) {
  struct Variant {
    int64_t d, dv, n_q, n_kv, heads, kv_heads, batch;
    MaskKind mask_kind;
    float max_bias, softcap;
    Layout q_layout, kv_layout;
  };
  const std::vector<Variant> variants = {
      {64, 64, 1, 13, 4, 4, 1, MaskKind::kNone, 0.0f, 0.0f, Layout::kContiguous, Layout::kContiguous},
      {64, 64, 7, 61, 8, 2, 1, MaskKind::kRandom, 0.0f, 0.0f, Layout::kContiguous, Layout::kContiguous},
      {128, 128, 1, 256, 4, 1, 1, MaskKind::kRandom, 0.0f, 0.0f, Layout::kContiguous, Layout::kContiguous},
      {32, 48, 5, 31, 2, 2, 2, MaskKind::kRandom, 0.0f, 0.0f, Layout::kContiguous, Layout::kContiguous},
      {64, 64, 7, 61, 8, 8, 1, MaskKind::kRandom, 8.0f, 0.0f, Layout::kContiguous, Layout::kContiguous},
      {64, 64, 7, 61, 4, 2, 1, MaskKind::kRandom, 0.0f, 30.0f, Layout::kContiguous, Layout::kContiguous},
      {64, 64, 7, 61, 8, 2, 1, MaskKind::kRandom, 0.0f, 0.0f, Layout::kPermuted, Layout::kPermuted},
      {64, 64, 3, 61, 4, 2, 1, MaskKind::kRandom, 0.0f, 0.0f, Layout::kPaddedRows, Layout::kPaddedRows},
      {64, 64, 9, 130, 4, 2, 1, MaskKind::kFullRows, 0.0f, 0.0f, Layout::kContiguous, Layout::kContiguous},
      {256, 256, 2, 65, 2, 1, 1, MaskKind::kRandom, 0.0f, 0.0f, Layout::kContiguous, Layout::kContiguous},
      // Prefill: tiles of queries (a partial one last), with and without shared KV heads.
      {64, 64, 67, 200, 8, 2, 1, MaskKind::kCausal, 0.0f, 0.0f, Layout::kContiguous, Layout::kContiguous},
      {32, 32, 13, 150, 3, 3, 2, MaskKind::kCausal, 0.0f, 0.0f, Layout::kContiguous, Layout::kContiguous},
  };
  for (DType kt : kFloatTypes) {
    for (const Variant& v : variants) {
      for (DType mt : {DType::F32, DType::F16}) {
        const bool masked = v.mask_kind != MaskKind::kNone;
        if (!masked && mt != DType::F32) continue;
        if (mt == DType::F16 && kt == DType::BF16) continue;
        std::string name = "kv_" + tn(kt) + "_d" + std::to_string(v.d) + "_dv" + std::to_string(v.dv) + "_q" +
                           std::to_string(v.n_q) + "_kv" + std::to_string(v.n_kv) + "_h" + std::to_string(v.heads) +
                           "_" + std::to_string(v.kv_heads) + "_b" + std::to_string(v.batch);
        if (masked) name += "_mask_" + tn(mt) + mask_name(v.mask_kind);
        if (v.max_bias > 0.0f) name += "_alibi";
        if (v.softcap > 0.0f) name += "_softcap";
        if (v.q_layout != Layout::kContiguous) name += "_q" + noncont(v.q_layout);
        if (v.kv_layout != Layout::kContiguous) name += "_kv" + noncont(v.kv_layout);
        t.add(Op::FLASH_ATTN_EXT, name, arithmetic_bound({kt}, kMatmulF32), [=](Context& ctx, Rng& rng) {
          Tensor* q = uniform(ctx, rng, DType::F32, {v.d, v.n_q, v.heads, v.batch}, v.q_layout);
          Tensor* k = uniform(ctx, rng, kt, {v.d, v.n_kv, v.kv_heads, v.batch}, v.kv_layout);
          Tensor* val = uniform(ctx, rng, kt, {v.dv, v.n_kv, v.kv_heads, v.batch}, v.kv_layout);
          // Padded mask rows (n_q rounded up), as ggml's KQ mask padding produces.
          Tensor* m = masked ? mask(ctx, rng, mt, {v.n_kv, (v.n_q + 7) / 8 * 8, 1, 1}, v.mask_kind) : nullptr;
          return flash_attn_ext(ctx, q, k, val, m, 1.0f / std::sqrt(float(v.d)), v.max_bias, v.softcap);
        });
      }
    }
  }
}

void add_reductions(Table& t) {
  const std::vector<std::pair<Shape, Layout>> sum_shapes = {
      {{1, 1, 1, 1}, Layout::kContiguous},    {{61, 13, 1, 1}, Layout::kContiguous},
      {{4096, 7, 1, 1}, Layout::kContiguous}, {{31, 7, 3, 2}, Layout::kPermuted},
      {{31, 7, 3, 2}, Layout::kTransposed},
  };
  for (const auto& [ne, layout] : sum_shapes) {
    t.add(Op::SUM_ROWS, "f32_" + dims(ne) + noncont(layout), kRowReduction,
          [=, ne = ne, layout = layout](Context& ctx, Rng& rng) {
            return sum_rows(ctx, uniform(ctx, rng, DType::F32, ne, layout));
          });
  }
  const std::vector<std::pair<Shape, Layout>> argmax_shapes = {
      {{1, 1, 1, 1}, Layout::kContiguous},   {{7, 1, 1, 1}, Layout::kContiguous},
      {{61, 13, 1, 1}, Layout::kContiguous}, {{4096, 7, 1, 1}, Layout::kContiguous},
      {{31, 9, 1, 1}, Layout::kTransposed},  {{31, 9, 1, 1}, Layout::kPaddedRows},
  };
  for (const auto& [ne, layout] : argmax_shapes) {
    t.add(Op::ARGMAX, "f32_" + dims(ne) + noncont(layout), kExact,
          [=, ne = ne, layout = layout](Context& ctx, Rng& rng) {
            return argmax(ctx, uniform(ctx, rng, DType::F32, ne, layout));
          });
    // Small integers: every row has several equal maxima, and the first one must win.
    t.add(Op::ARGMAX, "f32_" + dims(ne) + noncont(layout) + "_ties", kExact,
          [=, ne = ne, layout = layout](Context& ctx, Rng& rng) {
            Tensor* a = test::new_tensor(ctx, DType::F32, ne, layout);
            std::uniform_int_distribution<int> small(0, 3);
            std::vector<float> v(size_t(a->nelements()));
            for (float& x : v) x = float(small(rng));
            test::write_f32(*a, v);
            return argmax(ctx, a);
          });
  }
}

void add_batch_norm(Table& t) {
  const Shape ne = {13, 7, 5, 2};
  for (int axis = 0; axis < kMaxDims; ++axis) {
    for (bool affine : {false, true}) {
      for (Layout layout : {Layout::kContiguous, Layout::kPermuted}) {
        if (layout != Layout::kContiguous && !affine) continue;
        t.add(Op::BATCH_NORM,
              "f32_" + dims(ne) + "_axis" + std::to_string(axis) + (affine ? "_affine" : "") + noncont(layout),
              kElementwise, [=](Context& ctx, Rng& rng) {
                const Shape c = {ne[size_t(axis)], 1, 1, 1};
                Tensor* x = uniform(ctx, rng, DType::F32, ne, layout, -3.0f, 3.0f);
                Tensor* mean = uniform(ctx, rng, DType::F32, c);
                Tensor* var = uniform(ctx, rng, DType::F32, c, Layout::kContiguous, 0.5f, 2.0f);
                Tensor* gamma = affine ? uniform(ctx, rng, DType::F32, c) : nullptr;
                Tensor* beta = affine ? uniform(ctx, rng, DType::F32, c) : nullptr;
                return batch_norm(ctx, x, mean, var, gamma, beta, 1e-5f, axis);
              });
      }
    }
  }
}

void add_conv_pool(Table& t) {
  struct Conv {
    Shape kernel, input;
    Conv2dParams p;
    Layout layout;
  };
  const std::vector<Conv> convs = {
      {{3, 3, 3, 4}, {13, 11, 3, 2}, {1, 1, 1, 1, 1, 1}, Layout::kContiguous},
      {{3, 3, 3, 4}, {13, 11, 3, 2}, {2, 2, 0, 0, 1, 1}, Layout::kContiguous},
      {{5, 3, 2, 3}, {17, 13, 2, 1}, {2, 1, 2, 1, 1, 2}, Layout::kContiguous},
      {{1, 1, 8, 16}, {7, 7, 8, 1}, {1, 1, 0, 0, 1, 1}, Layout::kContiguous},
      {{3, 3, 8, 16}, {32, 32, 8, 1}, {1, 1, 1, 1, 1, 1}, Layout::kContiguous},
      {{1, 1, 1, 1}, {1, 1, 1, 1}, {1, 1, 0, 0, 1, 1}, Layout::kContiguous},
      {{3, 3, 3, 4}, {13, 11, 3, 2}, {1, 1, 1, 1, 1, 1}, Layout::kPermuted},
  };
  for (DType kt : {DType::F32, DType::F16}) {
    for (const Conv& c : convs) {
      const std::string name = tn(kt) + "_k" + dims(c.kernel) + "_in" + dims(c.input) + "_s" + std::to_string(c.p.s0) +
                               std::to_string(c.p.s1) + "_p" + std::to_string(c.p.p0) + std::to_string(c.p.p1) + "_d" +
                               std::to_string(c.p.d0) + std::to_string(c.p.d1) + noncont(c.layout);
      t.add(Op::CONV_2D, name, arithmetic_bound({kt}, kMatmulF32), [=](Context& ctx, Rng& rng) {
        Tensor* kernel = uniform(ctx, rng, kt, c.kernel);
        return conv_2d(ctx, kernel, uniform(ctx, rng, DType::F32, c.input, c.layout), c.p);
      });
    }
  }
  struct Pool {
    Shape a;
    Pool2dParams p;
    Layout layout;
  };
  const std::vector<Pool> pools = {
      {{13, 11, 3, 2}, {PoolOp::MAX, 2, 2, 2, 2, 0, 0}, Layout::kContiguous},
      {{13, 11, 3, 2}, {PoolOp::MAX, 3, 3, 1, 1, 1, 1}, Layout::kContiguous},
      {{17, 13, 2, 1}, {PoolOp::MAX, 3, 2, 2, 1, 1, 0}, Layout::kContiguous},
      {{1, 1, 1, 1}, {PoolOp::MAX, 1, 1, 1, 1, 0, 0}, Layout::kContiguous},
      {{13, 11, 3, 2}, {PoolOp::MAX, 2, 2, 2, 2, 1, 1}, Layout::kPermuted},
  };
  for (PoolOp op : {PoolOp::MAX, PoolOp::AVG}) {
    for (Pool pool : pools) {
      pool.p.op = op;
      const Pool2dParams& p = pool.p;
      const std::string name = std::string(op == PoolOp::MAX ? "max" : "avg") + "_" + dims(pool.a) + "_k" +
                               std::to_string(p.k0) + std::to_string(p.k1) + "_s" + std::to_string(p.s0) +
                               std::to_string(p.s1) + "_p" + std::to_string(p.p0) + std::to_string(p.p1) +
                               noncont(pool.layout);
      t.add(Op::POOL_2D, name, kElementwise, [=](Context& ctx, Rng& rng) {
        return pool_2d(ctx, uniform(ctx, rng, DType::F32, pool.a, pool.layout), pool.p);
      });
    }
  }
}

void add_concat(Table& t) {
  const Shape base = {13, 7, 3, 2};
  for (DType type : {DType::F32, DType::F16, DType::BF16, DType::I32}) {
    for (int dim = 0; dim < kMaxDims; ++dim) {
      Shape b = base;
      b[size_t(dim)] = 5;
      for (Layout layout : {Layout::kContiguous, Layout::kPermuted, Layout::kTransposed}) {
        t.add(Op::CONCAT, tn(type) + "_dim" + std::to_string(dim) + "_" + dims(base) + "_" + dims(b) + noncont(layout),
              kExact, [=](Context& ctx, Rng& rng) {
                Tensor* a = uniform(ctx, rng, type, base, layout, -50.0f, 50.0f);
                return concat(ctx, a, uniform(ctx, rng, type, b, Layout::kContiguous, -50.0f, 50.0f), dim);
              });
      }
    }
  }
}

void add_empty(Table& t) {
  t.add(Op::MUL_MAT, "f32_f32_empty_n", kExact, [](Context& ctx, Rng& rng) {
    return mul_mat(ctx, uniform(ctx, rng, DType::F32, {32, 7, 1, 1}), uniform(ctx, rng, DType::F32, {32, 0, 1, 1}));
  });
  t.add(Op::UNARY, "silu_f32_empty", kExact, [](Context& ctx, Rng& rng) {
    return silu(ctx, uniform(ctx, rng, DType::F32, {0, 1, 1, 1}));
  });
  t.add(Op::GET_ROWS, "f32_empty_idx", kExact, [](Context& ctx, Rng& rng) {
    Tensor* a = uniform(ctx, rng, DType::F32, {8, 4, 1, 1});
    return get_rows(ctx, a, uniform(ctx, rng, DType::I32, {0, 1, 1, 1}, Layout::kContiguous, 0, 4));
  });
}

const std::vector<OpCase>& all_cases() {
  static const std::vector<OpCase> cases = [] {
    Table t;
    add_mul_mat(t);
    add_binary(t);
    add_scale(t);
    add_unary(t);
    add_glu(t);
    add_norms(t);
    add_soft_max(t);
    add_rope(t);
    add_get_rows(t);
    add_set_rows(t);
    add_cpy_cont(t);
    add_quantized(t);
    add_views(t);
    add_flash_attn(t);
    add_reductions(t);
    add_batch_norm(t);
    add_conv_pool(t);
    add_concat(t);
    add_empty(t);
    return t.take();
  }();
  return cases;
}

// ---- running ----------------------------------------------------------------------------

// "cpu" is the registry's backend (the best ISA here); "cpu-<isa>" are the slower instruction
// sets this machine can also run, so that the portable and AVX2 kernels are checked as well.
std::vector<std::string> cpu_backend_names() {
  std::vector<std::string> names = {"cpu"};
  for (int isa = 0; isa < int(cpu::best_isa()); ++isa) {
    names.push_back("cpu-" + std::string(cpu::isa_name(cpu::Isa(isa))));
  }
  return names;
}

std::vector<std::string> all_backend_names() {
  std::vector<std::string> names = cpu_backend_names();
  names.push_back("reference");
  return names;
}

Backend& backend(const std::string& name) {
  static std::map<std::string, std::unique_ptr<Backend>> backends;
  auto it = backends.find(name);
  if (it != backends.end()) return *it->second;
  std::unique_ptr<Backend> made;
  for (int isa = 0; isa < cpu::kIsaCount && !made; ++isa) {
    if (name == "cpu-" + std::string(cpu::isa_name(cpu::Isa(isa)))) {
      made = cpu::make_cpu_backend(BackendOptions{}, cpu::Isa(isa));
    }
  }
  if (!made) made = make_backend(name);
  return *backends.emplace(name, std::move(made)).first->second;
}

uint32_t seed_of(const std::string& name) {
  uint32_t h = 2166136261u;  // FNV-1a: stable across runs and platforms
  for (char ch : name) h = (h ^ uint8_t(ch)) * 16777619u;
  return h;
}

// Each backend gets its own context, so ops writing into a destination (set_rows, cpy) start
// from identical but separate copies of it.
std::vector<float> run(const OpCase& c, const std::string& backend_name) {
  Context ctx;
  Rng rng(seed_of(c.name));
  Tensor* out = c.build(ctx, rng);
  EXPECT_EQ(out->op, c.op) << c.name << " builds " << op_name(out->op);
  const Graph graph = Graph::build(out);
  backend(backend_name).compute(graph);
  return test::read_f32(*out);
}

std::atomic<int> g_cases_run{0};

class BackendOps : public ::testing::TestWithParam<OpCase> {};

TEST_P(BackendOps, MatchesReference) {
  const OpCase& c = GetParam();
  ++g_cases_run;
  const std::vector<float> want = run(c, "reference");
  ASSERT_TRUE(std::ranges::none_of(want, [](float x) { return std::isnan(x); }))
      << c.name << ": the reference result has NaNs (bad case inputs)";
  for (const std::string& name : cpu_backend_names()) {
    const std::vector<float> got = run(c, name);
    const double err = test::nmse(got, want);
    EXPECT_LE(err, c.max_nmse) << name << " " << c.name << ": nmse " << err << " > " << c.max_nmse << "; "
                               << test::describe_difference(got, want);
  }
}

INSTANTIATE_TEST_SUITE_P(All, BackendOps, ::testing::ValuesIn(all_cases()),
                         [](const ::testing::TestParamInfo<OpCase>& info) { return info.param.name; });

// Prints how many cases this process ran, after all of them (ctest runs one per process).
class CaseCountReporter : public ::testing::Environment {
 public:
  void TearDown() override { std::printf("backend-ops: %d cases\n", g_cases_run.load()); }
};
const auto* const g_reporter = ::testing::AddGlobalTestEnvironment(new CaseCountReporter);

TEST(BackendOpsTable, CoversEveryOp) {
  std::map<Op, int> per_op;
  for (const OpCase& c : all_cases()) ++per_op[c.op];
  for (int op = 1; op < kOpCount; ++op) {
    EXPECT_GT(per_op[Op(op)], 0) << "no case for " << op_name(Op(op));
  }
  EXPECT_EQ(per_op.count(Op::NONE), 0u);
  std::printf("backend-ops: %zu cases in the table\n", all_cases().size());
  for (const auto& [op, n] : per_op) std::printf("  %-15s %d\n", std::string(op_name(op)).c_str(), n);
}

// ---- bad input --------------------------------------------------------------------------

TEST(BackendOpsBadInput, BuildersRejectWrongShapesAndTypesNamingTheOp) {
  struct Bad {
    std::string op;
    std::function<void(Context&)> build;
  };
  auto f32 = [](Context& ctx, Shape ne) { return ctx.new_tensor(DType::F32, ne); };
  auto f16 = [](Context& ctx, Shape ne) { return ctx.new_tensor(DType::F16, ne); };
  auto i32 = [](Context& ctx, Shape ne) { return ctx.new_tensor(DType::I32, ne); };
  const std::vector<Bad> bad = {
      {"mul_mat",
       [&](Context& c) {
         mul_mat(c, f32(c, {64, 4, 1, 1}), f32(c, {32, 4, 1, 1}));
       }},
      {"mul_mat",
       [&](Context& c) {
         mul_mat(c, f32(c, {32, 4, 3, 1}), f32(c, {32, 4, 2, 1}));
       }},
      {"mul_mat",
       [&](Context& c) {
         mul_mat(c, i32(c, {32, 4, 1, 1}), f32(c, {32, 4, 1, 1}));
       }},
      {"add",
       [&](Context& c) {
         add(c, f32(c, {8, 4, 1, 1}), f32(c, {3, 4, 1, 1}));
       }},
      {"sub",
       [&](Context& c) {
         sub(c, i32(c, {8, 1, 1, 1}), i32(c, {8, 1, 1, 1}));
       }},
      {"div",
       [&](Context& c) {
         div(c, f32(c, {8, 1, 1, 1}), f32(c, {8, 2, 1, 1}));
       }},
      {"scale",
       [&](Context& c) {
         scale(c, i32(c, {8, 1, 1, 1}), 2.0f);
       }},
      {"unary",
       [&](Context& c) {
         silu(c, i32(c, {8, 1, 1, 1}));
       }},
      {"glu",
       [&](Context& c) {
         glu(c, f32(c, {7, 2, 1, 1}), GluOp::SWIGLU);
       }},
      {"glu",
       [&](Context& c) {
         swiglu(c, f32(c, {8, 2, 1, 1}), f32(c, {8, 3, 1, 1}));
       }},
      {"rms_norm",
       [&](Context& c) {
         rms_norm(c, i32(c, {8, 2, 1, 1}), 1e-5f);
       }},
      {"norm",
       [&](Context& c) {
         norm(c, f32(c, {8, 2, 1, 1}), -1.0f);
       }},
      {"soft_max",
       [&](Context& c) {
         soft_max(c, f32(c, {8, 2, 1, 1}), f32(c, {7, 2, 1, 1}));
       }},
      {"soft_max",
       [&](Context& c) {
         soft_max(c, f32(c, {8, 4, 1, 1}), f32(c, {8, 2, 1, 1}));
       }},
      {"rope",
       [&](Context& c) {
         RopeParams p;
         p.n_dims = 8;
         rope(c, f32(c, {8, 2, 3, 1}), f32(c, {3, 1, 1, 1}), p);
       }},
      {"rope",
       [&](Context& c) {
         RopeParams p;
         p.n_dims = 7;
         rope(c, f32(c, {8, 2, 3, 1}), i32(c, {3, 1, 1, 1}), p);
       }},
      {"get_rows",
       [&](Context& c) {
         get_rows(c, f32(c, {8, 4, 1, 1}), f32(c, {2, 1, 1, 1}));
       }},
      {"set_rows",
       [&](Context& c) {
         set_rows(c, f32(c, {8, 4, 1, 1}), f16(c, {8, 2, 1, 1}), i32(c, {2, 1, 1, 1}));
       }},
      {"cpy",
       [&](Context& c) {
         cpy(c, f32(c, {8, 4, 1, 1}), f32(c, {8, 3, 1, 1}));
       }},
      {"cpy",
       [&](Context& c) {
         cpy(c, i32(c, {8, 4, 1, 1}), f32(c, {8, 4, 1, 1}));
       }},
      {"reshape",
       [&](Context& c) {
         reshape(c, transpose(c, f32(c, {8, 4, 1, 1})), {32});
       }},
      {"reshape",
       [&](Context& c) {
         reshape(c, f32(c, {8, 4, 1, 1}), {31});
       }},
      {"permute",
       [&](Context& c) {
         permute(c, f32(c, {8, 4, 1, 1}), 0, 0, 1, 2);
       }},
      {"view",
       [&](Context& c) {
         view_2d(c, f32(c, {8, 4, 1, 1}), 8, 8, 32, 0);
       }},
      {"flash_attn_ext",
       [&](Context& c) {
         flash_attn_ext(c, f32(c, {64, 1, 4, 1}), f32(c, {32, 8, 4, 1}), f32(c, {64, 8, 4, 1}), nullptr, 1.0f);
       }},
      {"flash_attn_ext",
       [&](Context& c) {
         flash_attn_ext(c, f32(c, {64, 1, 4, 1}), f32(c, {64, 8, 3, 1}), f32(c, {64, 8, 3, 1}), nullptr, 1.0f);
       }},
      {"sum_rows",
       [&](Context& c) {
         sum_rows(c, i32(c, {8, 4, 1, 1}));
       }},
      {"argmax",
       [&](Context& c) {
         argmax(c, f32(c, {8, 4, 2, 1}));
       }},
      {"batch_norm",
       [&](Context& c) {
         batch_norm(c, f32(c, {8, 4, 3, 1}), f32(c, {4, 1, 1, 1}), f32(c, {3, 1, 1, 1}), nullptr, nullptr, 1e-5f);
       }},
      {"conv_2d",
       [&](Context& c) {
         conv_2d(c, f32(c, {3, 3, 2, 4}), f32(c, {8, 8, 3, 1}));
       }},
      {"conv_2d",
       [&](Context& c) {
         conv_2d(c, f32(c, {9, 9, 3, 4}), f32(c, {8, 8, 3, 1}), Conv2dParams{});
       }},
      {"pool_2d",
       [&](Context& c) {
         pool_2d(c, f32(c, {8, 8, 1, 1}), Pool2dParams{PoolOp::MAX, 2, 2, 2, 2, 2, 0});
       }},
      {"concat",
       [&](Context& c) {
         concat(c, f32(c, {8, 4, 1, 1}), i32(c, {8, 4, 1, 1}), 0);
       }},
      {"concat",
       [&](Context& c) {
         concat(c, f32(c, {8, 4, 1, 1}), f32(c, {8, 5, 1, 1}), 0);
       }},
  };
  for (const Bad& b : bad) {
    Context ctx;
    try {
      b.build(ctx);
      ADD_FAILURE() << b.op << ": bad input accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(b.op), std::string::npos)
          << "message does not name " << b.op << ": " << e.what();
    }
  }
}

TEST(BackendOpsBadInput, UnsupportedNodeMakesComputeThrow) {
  for (const std::string& name : all_backend_names()) {
    Context ctx;
    Tensor* x = ctx.new_tensor(DType::F32, {8, 2});
    Tensor* y = scale(ctx, x, 2.0f);
    y->op = Op(kOpCount);  // an op no backend knows
    const Graph graph = Graph::build(y);
    try {
      backend(name).compute(graph);
      ADD_FAILURE() << name << ": an unknown op was computed";
    } catch (const Error& e) {
      const std::string prefix = std::string(backend(name).name()) + ":";
      EXPECT_EQ(std::string(e.what()).rfind(prefix, 0), 0u) << name << ": " << e.what();
    }
  }
}

TEST(BackendOpsBadInput, UnallocatedGraphIsRefused) {
  for (const std::string& name : all_backend_names()) {
    Context ctx(ContextOptions{.no_alloc = true});
    Tensor* y = silu(ctx, ctx.new_tensor(DType::F32, {8, 2}));
    EXPECT_THROW(backend(name).compute(Graph::build(y)), Error) << name;
  }
}

TEST(BackendOpsBadInput, RowIndexOutOfRangeIsAComputeError) {
  for (const std::string& name : all_backend_names()) {
    Context ctx;
    Rng rng(1);
    Tensor* a = uniform(ctx, rng, DType::F32, {8, 4, 1, 1});
    for (float bad : {4.0f, -1.0f}) {
      Tensor* idx = from_values(ctx, DType::I32, {3, 1, 1, 1}, {0.0f, bad, 1.0f});
      EXPECT_THROW(backend(name).compute(Graph::build(get_rows(ctx, a, idx))), Error) << name << " index " << bad;
    }
  }
}

TEST(BackendOpsBadInput, EmptyGraphComputes) {
  for (const std::string& name : all_backend_names()) {
    EXPECT_NO_THROW(backend(name).compute(Graph{})) << name;
  }
}

}  // namespace
}  // namespace tg
