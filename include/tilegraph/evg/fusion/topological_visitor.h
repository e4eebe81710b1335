#pragma once
// TopologicalVisitor<EdgeTuple, Ops...>: a DAG (Catlass EVG's TopologicalVisitor). EdgeTuple is
// std::tuple<Seq<inputs of op 0>, Seq<inputs of op 1>, ...>, one per op, each input an index of
// an earlier op; the last op is the root. A node with several consumers is computed once per
// sub-tile and its value read by all of them — Catlass EVG's example (C+X)+(C+X):
//
//   using CX = TopologicalVisitor<
//       std::tuple<Seq<>, Seq<>, Seq<0, 1>, Seq<2, 2>, Seq<3>>,
//       VisitorAuxLoad<float>, VisitorAuxLoad<float>, VisitorCompute<fn::Plus>,
//       VisitorCompute<fn::Plus>, VisitorAuxStore<float>>;
//   CX::Arguments args{ {c_ptr}, {x_ptr}, {}, {}, {d_ptr} };   // one per op
//
// An op with inputs must be a leaf node; an op without may also be an organiser (a subtree
// whose root is its value). Several sinks (stores, reductions) may hang off the DAG; ops that
// produce a value nobody uses are rejected at compile time.
#include <tuple>
#include <type_traits>

#include "tilegraph/evg/fusion/graph.h"

namespace tg::evg {

namespace detail {

template <int... R>
constexpr int seq_at(Seq<R...>, int index) {
  constexpr int roots[] = {R..., -1};
  return roots[index];
}

template <class EdgeTuple>
struct EdgeListOf;
template <class... E>
struct EdgeListOf<std::tuple<E...>> {
  using type = TypeList<E...>;
};

template <class G, class Roots, class EdgeList, class... Ops>
struct TopoBuild {
  using graph = G;
};

template <class G, int... R, int... In, class... RestEdges, class Op, class... RestOps>
struct TopoBuild<G, Seq<R...>, TypeList<Seq<In...>, RestEdges...>, Op, RestOps...>
    : TopoBuild<std::conditional_t<Organiser<Op>, typename Append<G, FlatOf<Op>>::type,
                                   typename AppendNode<G, Op, Seq<seq_at(Seq<R...>{}, In)...>>::type>,
                Seq<R..., G::kSize + FlatOf<Op>::kRoot>, TypeList<RestEdges...>, RestOps...> {
  static_assert(((In >= 0 && In < int(sizeof...(R))) && ...),
                "evg: a TopologicalVisitor edge must name an earlier op (ops are listed in "
                "topological order)");
  static_assert(!Organiser<Op> || sizeof...(In) == 0,
                "evg: an organiser inside a TopologicalVisitor cannot take edges; make its inputs "
                "ops of the DAG instead");
};

}  // namespace detail

template <class EdgeTuple, class... Ops>
struct TopologicalVisitor {
  static_assert(std::tuple_size_v<EdgeTuple> == sizeof...(Ops), "evg: a TopologicalVisitor needs one edge list per op");
  static_assert(sizeof...(Ops) >= 1, "evg: an empty TopologicalVisitor");

  using Arguments = std::tuple<typename Ops::Arguments...>;
  using Flat =
      typename detail::TopoBuild<EmptyGraph, Seq<>, typename detail::EdgeListOf<EdgeTuple>::type, Ops...>::graph;

  static auto flatten_arguments(const Arguments& args) {
    return [&]<size_t... K>(std::index_sequence<K...>) {
      return std::tuple_cat(evg::flatten_arguments<Ops>(std::get<K>(args))...);
    }
    (std::index_sequence_for<Ops...>{});
  }
};

}  // namespace tg::evg
