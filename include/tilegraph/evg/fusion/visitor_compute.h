#pragma once
// VisitorCompute<Fn, ElementCompute>: an n-ary elementwise function of its inputs (functors in
// functional.h). Inputs must be ElementCompute already: per-edge types are explicit, so a
// VisitorCast goes in front of any input of another type. Its extent is the join of its
// inputs' (a bias computed with a scalar stays a row).
#include <type_traits>

#include "tilegraph/evg/arch/simd.h"
#include "tilegraph/evg/fusion/node.h"
#include "tilegraph/evg/fusion/tile.h"

TG_EVG_DIAGNOSTICS_PUSH

namespace tg::evg {

template <class Fn, class ElementCompute = float>
struct VisitorCompute {
  static_assert(std::is_same_v<ElementCompute, float>,
                "VisitorCompute computes in f32: cast other types with VisitorCast");
  static constexpr const char* kName = "VisitorCompute";
  static constexpr NodeRole kRole = NodeRole::kCompute;
  static constexpr int kArity = Fn::kArity;
  using ElementInput = ElementCompute;
  using ElementOutput = ElementCompute;
  using Arguments = typename Fn::Arguments;

  VisitorCompute(const Arguments& args, const NodeContext&) : fn_(args) {}

  template <int W, class... V>
  TG_EVG_INLINE simd::Vec<float, W> compute(V... inputs) const {
    static_assert(sizeof...(V) == kArity);
    return fn_(inputs...);
  }

 private:
  Fn fn_;
};

}  // namespace tg::evg

TG_EVG_DIAGNOSTICS_POP
