#pragma once
// The flat form every epilogue graph is reduced to: leaf nodes in a topological order, each with
// the indices of its inputs. TreeVisitor and TopologicalVisitor build it at compile time
// (tree_visitor.h, topological_visitor.h); GraphInfo derives what execution needs from it —
// roles, extents, which buffer holds each value — and checks the graph with static_asserts
// that say what is wrong.
#include <array>
#include <tuple>
#include <type_traits>
#include <utility>

#include "tilegraph/evg/fusion/node.h"
#include "tilegraph/evg/fusion/tile.h"
#include "tilegraph/evg/numeric/element.h"

namespace tg::evg {

template <class... Ts>
struct TypeList {};

// The inputs of one node, by index (Catlass's tla::seq).
template <int... Is>
using Seq = std::integer_sequence<int, Is...>;

inline constexpr int kMaxArity = 4;

// Organisers publish their flattened graph as V::Flat and flatten their Arguments; anything
// else is a leaf node.
template <class V>
concept Organiser = requires {
  typename V::Flat;
};

template <class OpList, class EdgeList>
struct FlatGraph;

template <class... Ops, class... Edges>
struct FlatGraph<TypeList<Ops...>, TypeList<Edges...>> {
  using OpList = TypeList<Ops...>;
  using EdgeList = TypeList<Edges...>;
  using OpTuple = std::tuple<Ops...>;
  // What BlockEpilogue hands to the nodes: each leaf's Arguments, in flat order.
  using ArgumentTuple = std::tuple<typename Ops::Arguments...>;
  static constexpr int kSize = int(sizeof...(Ops));
  static constexpr int kRoot = kSize - 1;  // organisers always append their root last
};

using EmptyGraph = FlatGraph<TypeList<>, TypeList<>>;

namespace detail {

template <int Offset, class S>
struct ShiftSeq;
template <int Offset, int... Is>
struct ShiftSeq<Offset, Seq<Is...>> {
  using type = Seq<(Is + Offset)...>;
};

template <class G1, class G2>
struct Append;
template <class... A, class... EA, class... B, class... EB>
struct Append<FlatGraph<TypeList<A...>, TypeList<EA...>>, FlatGraph<TypeList<B...>, TypeList<EB...>>> {
  using type = FlatGraph<TypeList<A..., B...>, TypeList<EA..., typename ShiftSeq<int(sizeof...(A)), EB>::type...>>;
};

// Appends leaf `Node` whose inputs are the (absolute) indices `Inputs`.
template <class G, class Node, class Inputs>
struct AppendNode;
template <class... A, class... EA, class Node, class Inputs>
struct AppendNode<FlatGraph<TypeList<A...>, TypeList<EA...>>, Node, Inputs> {
  using type = FlatGraph<TypeList<A..., Node>, TypeList<EA..., Inputs>>;
};

template <int... Is>
constexpr std::array<int, kMaxArity> edge_array(Seq<Is...>) {
  static_assert(sizeof...(Is) <= kMaxArity, "a node has at most 4 inputs");
  std::array<int, kMaxArity> a{-1, -1, -1, -1};
  int k = 0;
  ((a[size_t(k++)] = Is), ...);
  return a;
}

template <int... Is>
constexpr int seq_size(Seq<Is...>) {
  return int(sizeof...(Is));
}

}  // namespace detail

// The flat graph of a visitor: itself for a leaf node, V::Flat for an organiser.
template <class V>
struct FlatOfImpl {
  using type = FlatGraph<TypeList<V>, TypeList<Seq<>>>;
};
template <Organiser V>
struct FlatOfImpl<V> {
  using type = typename V::Flat;
};
template <class V>
using FlatOf = typename FlatOfImpl<V>::type;

// A visitor's Arguments as the flat ArgumentTuple of its graph.
template <class V>
auto flatten_arguments(const typename V::Arguments& args) {
  if constexpr (Organiser<V>) {
    return V::flatten_arguments(args);
  } else {
    return std::tuple<typename V::Arguments>(args);
  }
}

template <class Node>
constexpr Extent load_extent() {
  if constexpr (Node::kRole == NodeRole::kLoad) {
    return Node::kExtent;
  } else {
    return Extent::kScalar;
  }
}

// Element type a node expects on its inputs (void for loads).
template <class Node>
struct InputElementOf {
  using type = typename Node::ElementInput;
};
template <class Node>
  requires(Node::kRole == NodeRole::kLoad)
struct InputElementOf<Node> {
  using type = void;
};

template <class Graph>
struct GraphInfo;

template <class... Ops, class... Edges>
struct GraphInfo<FlatGraph<TypeList<Ops...>, TypeList<Edges...>>> {
  using Graph = FlatGraph<TypeList<Ops...>, TypeList<Edges...>>;
  static constexpr int kSize = int(sizeof...(Ops));
  template <int I>
  using Op = std::tuple_element_t<size_t(I), std::tuple<Ops...>>;
  template <int I>
  using Lane = LaneOf<typename Op<I>::ElementOutput>;

  static constexpr std::array<NodeRole, kSize> kRole{Ops::kRole...};
  static constexpr std::array<int, kSize> kArity{detail::seq_size(Edges{})...};
  static constexpr std::array<std::array<int, kMaxArity>, kSize> kInputs{detail::edge_array(Edges{})...};
  static constexpr std::array<int, kSize> kLaneBytes{int(sizeof(LaneOf<typename Ops::ElementOutput>))...};

  // Which node's buffer holds node i's value: its own for loads and computes, its input's
  // for the pass-through stores and reductions.
  static constexpr std::array<int, kSize> kOwner = [] {
    std::array<int, kSize> owner{};
    for (int i = 0; i < kSize; ++i) {
      const NodeRole role = kRole[size_t(i)];
      const bool passes_through = role == NodeRole::kStore || role == NodeRole::kReduce;
      owner[size_t(i)] = passes_through ? owner[size_t(kInputs[size_t(i)][0])] : i;
    }
    return owner;
  }();

  static constexpr std::array<Extent, kSize> kExtent = [] {
    constexpr std::array<Extent, kSize> loads{load_extent<Ops>()...};
    std::array<Extent, kSize> extent{};
    for (int i = 0; i < kSize; ++i) {
      if (kRole[size_t(i)] == NodeRole::kLoad) {
        extent[size_t(i)] = loads[size_t(i)];
      } else {
        Extent e = Extent::kScalar;
        for (int k = 0; k < kArity[size_t(i)]; ++k) e = join(e, extent[size_t(kInputs[size_t(i)][size_t(k)])]);
        extent[size_t(i)] = e;
      }
    }
    return extent;
  }();

  static constexpr std::array<bool, kSize> kUsed = [] {
    std::array<bool, kSize> used{};
    for (int i = 0; i < kSize; ++i) {
      for (int k = 0; k < kArity[size_t(i)]; ++k) used[size_t(kInputs[size_t(i)][size_t(k)])] = true;
    }
    return used;
  }();

  static constexpr bool is_tile_compute(int i) {
    return kRole[size_t(i)] == NodeRole::kCompute && kExtent[size_t(i)] == Extent::kTile;
  }

  template <int I>
  static constexpr bool check_node() {
    using Node = Op<I>;
    static_assert(kArity[size_t(I)] == Node::kArity,
                  "evg: a node has a different number of inputs than its operation takes");
    static_assert(Node::kRole == NodeRole::kLoad || kArity[size_t(I)] >= 1,
                  "evg: compute, cast, store and reduce nodes need an input");
    [&]<int... K>(std::integer_sequence<int, K...>) {
      static_assert((std::is_same_v<typename Op<kInputs[size_t(I)][size_t(K)]>::ElementOutput,
                                    typename InputElementOf<Node>::type> &&
                     ...),
                    "evg: an edge carries another element type than its consumer takes: insert a "
                    "VisitorCast");
    }
    (std::make_integer_sequence < int, Node::kRole == NodeRole::kLoad ? 0 : Node::kArity > {});
    static_assert(kUsed[size_t(I)] || Node::kRole == NodeRole::kStore || Node::kRole == NodeRole::kReduce,
                  "evg: a value is computed but never stored, reduced or used: every graph "
                  "output must end in a VisitorAuxStore, VisitorRowReduce or VisitorColReduce");
    return true;
  }

  static constexpr bool kChecked = [] {
    static_assert(kSize > 0, "evg: an empty epilogue graph");
    return [&]<int... I>(std::integer_sequence<int, I...>) { return (check_node<I>() && ...); }
    (std::make_integer_sequence<int, kSize>{});
  }();
};

}  // namespace tg::evg
