// Mistakes in an epilogue graph are compile errors that say what to do (docs/evg.md). This file
// is a valid graph; each TG_BREAK_* macro introduces one mistake, and tests/compile_fail's ctest
// cases compile it with that macro and look for the message. The unbroken build is the control:
// it shows that a failure comes from the mistake, not from the harness.
#include "tilegraph/evg/evg.h"

namespace {

using namespace tg::evg;

// D = (acc + f32(C)) * acc, with C stored as f16: a DAG whose accumulator feeds two nodes.
#if defined(TG_BREAK_CAST)
// The f16 load feeds the f32 add directly.
using Edges = std::tuple<Seq<>, Seq<>, Seq<0, 1>, Seq<2, 0>, Seq<3>>;
using EVG = TopologicalVisitor<Edges, VisitorAccLoad, VisitorAuxLoad<tg::f16>, VisitorCompute<fn::Plus>,
                               VisitorCompute<fn::Multiplies>, VisitorAuxStore<float>>;
#elif defined(TG_BREAK_UNUSED)
// The product is computed but never stored.
using Edges = std::tuple<Seq<>, Seq<>, Seq<1>, Seq<0, 2>, Seq<3, 0>, Seq<3>>;
using EVG = TopologicalVisitor<Edges, VisitorAccLoad, VisitorAuxLoad<tg::f16>, VisitorCast<float, tg::f16>,
                               VisitorCompute<fn::Plus>, VisitorCompute<fn::Multiplies>, VisitorAuxStore<float>>;
#elif defined(TG_BREAK_ORDER)
// The cast names the load that follows it.
using Edges = std::tuple<Seq<>, Seq<2>, Seq<>, Seq<0, 1>, Seq<3, 0>, Seq<4>>;
using EVG = TopologicalVisitor<Edges, VisitorAccLoad, VisitorCast<float, tg::f16>, VisitorAuxLoad<tg::f16>,
                               VisitorCompute<fn::Plus>, VisitorCompute<fn::Multiplies>, VisitorAuxStore<float>>;
#else
using Edges = std::tuple<Seq<>, Seq<>, Seq<1>, Seq<0, 2>, Seq<3, 0>, Seq<4>>;
using EVG = TopologicalVisitor<Edges, VisitorAccLoad, VisitorAuxLoad<tg::f16>, VisitorCast<float, tg::f16>,
                               VisitorCompute<fn::Plus>, VisitorCompute<fn::Multiplies>, VisitorAuxStore<float>>;
#endif

using Epilogue = BlockEpilogue<arch::Cpu<>, 2048, EVG>;

}  // namespace

// Instantiates the graph's checks.
size_t arena_bytes() { return Epilogue::Executor::arena_bytes(); }
