#pragma once
// A checked string epilogue: a DAG of EVG nodes in topological order, shared subexpressions
// merged (Catlass EVG's example (C+X)+(C+X) computes C+X once), every edge typed, ready to lower to a
// TopologicalVisitor.
//
// Checks (each a FrontEndError with the position and name): unknown names and functions,
// wrong argument counts, type mismatches (arithmetic is f32; f16/bf16/i8 widen to f32 silently
// because that is exact; i32 and every narrowing need an explicit cast), misuse of vectors and
// matrices, reductions used as values, cycles between statements, names assigned twice,
// assignments to inputs, unused inputs and local names, unassigned outputs.
#include <string>
#include <string_view>
#include <vector>

#include "tilegraph/evg/frontend/ast.h"
#include "tilegraph/evg/frontend/signature.h"
#include "tilegraph/evg/fusion/tile.h"
#include "tilegraph/evg/numeric/round_mode.h"

namespace tg::evg::frontend {

enum class DagOp {
  kAcc,          // VisitorAccLoad
  kLoad,         // VisitorAuxLoad of a matrix input
  kRowInput,     // VisitorRowBroadcast of a row-vector input
  kColInput,     // VisitorColBroadcast of a column-vector input
  kScalarInput,  // VisitorScalarBroadcast of a scalar input
  kConstant,     // VisitorScalarBroadcast of a literal
  kCast,         // VisitorCast
  kCompute,      // VisitorCompute
  kStore,        // VisitorAuxStore of a matrix output
  kRowReduce,    // VisitorRowReduce into a row-vector output
  kColReduce,    // VisitorColReduce into a column-vector output
};

struct DagNode {
  DagOp op = DagOp::kAcc;
  ElementType type = ElementType::kF32;  // of the value on its outgoing edges
  Extent extent = Extent::kTile;
  std::vector<int> inputs;    // indices of earlier nodes
  std::string function;       // kCompute: the functor (FunctionInfo::functor); kRow/ColReduce: sum|max|min
  std::vector<float> params;  // kConstant: its value; kCompute: the functor's literal arguments
  RoundMode round = RoundMode::kNearestEven;  // kCast
  std::string operand;                        // inputs and outputs: the declared name
  SourcePosition position;                    // where the node came from
};

struct EpilogueDag {
  std::vector<DagNode> nodes;  // topological: inputs before their consumers; sinks last
  // The declared operands the kernel reads or writes, in the order it expects their bindings.
  std::vector<OperandDecl> operands;
};

// A function callable by name in a string epilogue.
struct FunctionInfo {
  std::string_view name;     // as written: "gelu"
  std::string_view functor;  // tg::evg::fn:: type: "GELU"
  int arity;                 // value arguments
  int literal_params;        // trailing number arguments passed to the functor's Arguments
};
// The compute functions (not casts or reductions): relu, gelu, gelu_erf, silu, sigmoid, tanh,
// exp, neg, abs, square, max, min, fma, clamp(x, lo, hi), leaky_relu(x, slope).
const std::vector<FunctionInfo>& compute_functions();
// Whether `name` is a reduction (row_sum, row_max, row_min, col_sum, col_max, col_min): then
// over_rows says which (row_* reduce over the rows, giving a row vector) and fn is sum|max|min.
bool parse_reduction(std::string_view name, bool& over_rows, std::string& fn);

// Parses, checks and builds the DAG.
EpilogueDag build_dag(std::string_view source, const Signature& signature);
EpilogueDag build_dag(const Program& program, const Signature& signature);

}  // namespace tg::evg::frontend
