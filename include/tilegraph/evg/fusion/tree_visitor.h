#pragma once
// TreeVisitor<NodeOp, Children...>: NodeOp applied to the values of its children, each a leaf
// node or another organiser (Catlass EVG's TreeVisitor; CUTLASS's Sm90EVT). A child used twice in
// a tree is computed twice; share it with a TopologicalVisitor.
//
//   using EVG = TreeVisitor<VisitorAuxStore<float>,
//                 TreeVisitor<VisitorCompute<fn::Plus>, VisitorAccLoad, VisitorAuxLoad<float>>>;
//   EVG::Arguments args{ { {}, {c_ptr}, {} }, {d_ptr} };   // children first, then the node
#include <tuple>
#include <utility>

#include "tilegraph/evg/fusion/graph.h"

namespace tg::evg {

namespace detail {

// Appends each child's flat graph in turn and records where its root landed.
template <class G, class Roots, class... Children>
struct ConcatChildren {
  using graph = G;
  using roots = Roots;
};
template <class G, int... R, class Child, class... Rest>
struct ConcatChildren<G, Seq<R...>, Child, Rest...>
    : ConcatChildren<typename Append<G, FlatOf<Child>>::type, Seq<R..., G::kSize + FlatOf<Child>::kRoot>, Rest...> {};

}  // namespace detail

template <class NodeOp, class... Children>
struct TreeVisitor {
  static_assert(!Organiser<NodeOp>, "evg: a TreeVisitor's node is a leaf node; nest organisers as children");
  static_assert(sizeof...(Children) >= 1, "evg: a TreeVisitor needs children; use the node itself as a leaf");

  using Arguments = std::tuple<typename Children::Arguments..., typename NodeOp::Arguments>;

 private:
  using Concat = detail::ConcatChildren<EmptyGraph, Seq<>, Children...>;

 public:
  using Flat = typename detail::AppendNode<typename Concat::graph, NodeOp, typename Concat::roots>::type;

  static auto flatten_arguments(const Arguments& args) {
    return [&]<size_t... K>(std::index_sequence<K...>) {
      return std::tuple_cat(evg::flatten_arguments<Children>(std::get<K>(args))...,
                            std::tuple<typename NodeOp::Arguments>(std::get<sizeof...(Children)>(args)));
    }
    (std::index_sequence_for<Children...>{});
  }
};

}  // namespace tg::evg
