#pragma once
// VisitorCast<To, From, Round>: converts an edge's element type (numeric/convert.h has the
// supported pairs, rounding and saturation rules). Bit-exact and lane-count independent.
#include "tilegraph/evg/arch/simd.h"
#include "tilegraph/evg/fusion/node.h"
#include "tilegraph/evg/fusion/tile.h"
#include "tilegraph/evg/numeric/convert.h"

TG_EVG_DIAGNOSTICS_PUSH

namespace tg::evg {

template <EvgElement To, EvgElement From, RoundMode Round = RoundMode::kNearestEven>
struct VisitorCast {
  static_assert(numeric::kConvertible<To, From>, "VisitorCast converts f32 <-> f16/bf16/i8/i32 only: cast through f32");
  static constexpr const char* kName = "VisitorCast";
  static constexpr NodeRole kRole = NodeRole::kCompute;
  static constexpr int kArity = 1;
  using ElementInput = From;
  using ElementOutput = To;
  struct Arguments {};

  VisitorCast(const Arguments&, const NodeContext&) {}

  template <int W>
  TG_EVG_INLINE simd::Vec<LaneOf<To>, W> compute(simd::Vec<LaneOf<From>, W> x) const {
    return numeric::convert_lanes<To, From, Round, W>(x);
  }
};

}  // namespace tg::evg

TG_EVG_DIAGNOSTICS_POP
