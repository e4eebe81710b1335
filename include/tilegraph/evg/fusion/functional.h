#pragma once
// The functors of VisitorCompute<Fn> and of the reductions. A compute functor has
//   static constexpr int kArity;          how many inputs
//   static constexpr const char* kName;   its name in messages and in the string front end
//   struct Arguments;                     its parameters (empty for most), and a constructor
//                                         from them
//   template <class V> V operator()(V...) const;   on W-lane f32 vectors (W = 1 included)
// Semantics follow tilegraph's reference ops (core/reference.cpp) so that a fused epilogue
// matches the unfused graph: relu(NaN) = 0, max/min propagate NaN.
#include "tilegraph/evg/arch/simd.h"
#include "tilegraph/evg/fusion/math.h"

TG_EVG_DIAGNOSTICS_PUSH

namespace tg::evg::fn {

struct NoArguments {};

// Parameterless functors share this boilerplate.
#define TG_EVG_PLAIN_FUNCTOR(Name, arity, name) \
  static constexpr int kArity = arity;          \
  static constexpr const char* kName = name;    \
  using Arguments = NoArguments;                \
  Name() = default;                             \
  explicit Name(const Arguments&) {}

struct Plus {
  TG_EVG_PLAIN_FUNCTOR(Plus, 2, "add")
  template <class V>
  TG_EVG_INLINE V operator()(V a, V b) const {
    return a + b;
  }
};

struct Minus {
  TG_EVG_PLAIN_FUNCTOR(Minus, 2, "sub")
  template <class V>
  TG_EVG_INLINE V operator()(V a, V b) const {
    return a - b;
  }
};

struct Multiplies {
  TG_EVG_PLAIN_FUNCTOR(Multiplies, 2, "mul")
  template <class V>
  TG_EVG_INLINE V operator()(V a, V b) const {
    return a * b;
  }
};

struct Divides {
  TG_EVG_PLAIN_FUNCTOR(Divides, 2, "div")
  template <class V>
  TG_EVG_INLINE V operator()(V a, V b) const {
    return a / b;
  }
};

struct Maximum {
  TG_EVG_PLAIN_FUNCTOR(Maximum, 2, "max")
  template <class V>
  TG_EVG_INLINE V operator()(V a, V b) const {
    return math::max_nan(a, b);
  }
};

struct Minimum {
  TG_EVG_PLAIN_FUNCTOR(Minimum, 2, "min")
  template <class V>
  TG_EVG_INLINE V operator()(V a, V b) const {
    return math::min_nan(a, b);
  }
};

// a * b + c (rounded twice unless the target contracts it to an FMA).
struct MultiplyAdd {
  TG_EVG_PLAIN_FUNCTOR(MultiplyAdd, 3, "fma")
  template <class V>
  TG_EVG_INLINE V operator()(V a, V b, V c) const {
    return a * b + c;
  }
};

struct Negate {
  TG_EVG_PLAIN_FUNCTOR(Negate, 1, "neg")
  template <class V>
  TG_EVG_INLINE V operator()(V x) const {
    return -x;
  }
};

struct Absolute {
  TG_EVG_PLAIN_FUNCTOR(Absolute, 1, "abs")
  template <class V>
  TG_EVG_INLINE V operator()(V x) const {
    return math::abs(x);
  }
};

struct Square {
  TG_EVG_PLAIN_FUNCTOR(Square, 1, "square")
  template <class V>
  TG_EVG_INLINE V operator()(V x) const {
    return x * x;
  }
};

struct ReLU {
  TG_EVG_PLAIN_FUNCTOR(ReLU, 1, "relu")
  template <class V>
  TG_EVG_INLINE V operator()(V x) const {
    return simd::select(x > 0.0f, x, V{});
  }
};

struct GELU {
  TG_EVG_PLAIN_FUNCTOR(GELU, 1, "gelu")
  template <class V>
  TG_EVG_INLINE V operator()(V x) const {
    return math::gelu_tanh(x);
  }
};

struct GELUErf {
  TG_EVG_PLAIN_FUNCTOR(GELUErf, 1, "gelu_erf")
  template <class V>
  TG_EVG_INLINE V operator()(V x) const {
    return math::gelu_erf(x);
  }
};

struct SiLU {
  TG_EVG_PLAIN_FUNCTOR(SiLU, 1, "silu")
  template <class V>
  TG_EVG_INLINE V operator()(V x) const {
    return math::silu(x);
  }
};

struct Sigmoid {
  TG_EVG_PLAIN_FUNCTOR(Sigmoid, 1, "sigmoid")
  template <class V>
  TG_EVG_INLINE V operator()(V x) const {
    return math::sigmoid(x);
  }
};

struct Tanh {
  TG_EVG_PLAIN_FUNCTOR(Tanh, 1, "tanh")
  template <class V>
  TG_EVG_INLINE V operator()(V x) const {
    return math::tanh(x);
  }
};

struct Exp {
  TG_EVG_PLAIN_FUNCTOR(Exp, 1, "exp")
  template <class V>
  TG_EVG_INLINE V operator()(V x) const {
    return math::exp(x);
  }
};

#undef TG_EVG_PLAIN_FUNCTOR

// x * factor.
struct Scale {
  static constexpr int kArity = 1;
  static constexpr const char* kName = "scale";
  struct Arguments {
    float factor = 1.0f;
  };
  Scale() = default;
  explicit Scale(const Arguments& args) : factor(args.factor) {}
  template <class V>
  TG_EVG_INLINE V operator()(V x) const {
    return x * factor;
  }
  float factor = 1.0f;
};

// x for x > 0, x * slope otherwise.
struct LeakyReLU {
  static constexpr int kArity = 1;
  static constexpr const char* kName = "leaky_relu";
  struct Arguments {
    float slope = 0.01f;
  };
  LeakyReLU() = default;
  explicit LeakyReLU(const Arguments& args) : slope(args.slope) {}
  template <class V>
  TG_EVG_INLINE V operator()(V x) const {
    return simd::select(x > 0.0f, x, x * slope);
  }
  float slope = 0.01f;
};

// min(max(x, lo), hi); NaN stays NaN.
struct Clamp {
  static constexpr int kArity = 1;
  static constexpr const char* kName = "clamp";
  struct Arguments {
    float lo = 0.0f;
    float hi = 1.0f;
  };
  Clamp() = default;
  explicit Clamp(const Arguments& args) : lo(args.lo), hi(args.hi) {}
  template <class V>
  TG_EVG_INLINE V operator()(V x) const {
    return math::min_nan(math::max_nan(x, simd::broadcast<V>(lo)), simd::broadcast<V>(hi));
  }
  float lo = 0.0f;
  float hi = 1.0f;
};

}  // namespace tg::evg::fn

// Reductions: an identity and an order-insensitive (for max/min) or order-fixed (for sum)
// combine. The nodes fold in a fixed order, so results do not depend on threads or schedule.
namespace tg::evg::reduce {

struct Sum {
  static constexpr const char* kName = "sum";
  // -0, not +0: -0 + x == x for every x (+0 + -0 would give +0), so padding folds are exact.
  static constexpr float identity() { return -0.0f; }
  template <class V>
  TG_EVG_INLINE V operator()(V a, V b) const {
    return a + b;
  }
};

struct Max {
  static constexpr const char* kName = "max";
  static constexpr float identity() { return -__builtin_inff(); }
  template <class V>
  TG_EVG_INLINE V operator()(V a, V b) const {
    return math::max_nan(a, b);
  }
};

struct Min {
  static constexpr const char* kName = "min";
  static constexpr float identity() { return __builtin_inff(); }
  template <class V>
  TG_EVG_INLINE V operator()(V a, V b) const {
    return math::min_nan(a, b);
  }
};

}  // namespace tg::evg::reduce

TG_EVG_DIAGNOSTICS_POP
