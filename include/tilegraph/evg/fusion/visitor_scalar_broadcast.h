#pragma once
// VisitorScalarBroadcast<Element>: one value for the whole output (alpha, beta, a constant).
#include "tilegraph/evg/fusion/node.h"
#include "tilegraph/evg/fusion/tile.h"
#include "tilegraph/evg/numeric/element.h"

namespace tg::evg {

template <EvgElement Element = float>
struct VisitorScalarBroadcast {
  static constexpr const char* kName = "VisitorScalarBroadcast";
  static constexpr NodeRole kRole = NodeRole::kLoad;
  static constexpr int kArity = 0;
  static constexpr Extent kExtent = Extent::kScalar;
  using ElementOutput = Element;
  using Lane = LaneOf<Element>;
  struct Arguments {
    Element value{};
  };

  VisitorScalarBroadcast(const Arguments& args, const NodeContext&) : value_(__builtin_bit_cast(Lane, args.value)) {}

  Footprint footprint() const { return {}; }

  template <int W>
  void load(const SubTile&, Lane* out) const {
    out[0] = value_;
  }

 private:
  Lane value_;
};

}  // namespace tg::evg
