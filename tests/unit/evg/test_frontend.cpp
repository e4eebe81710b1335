// The string front end without the JIT: what DAG a source becomes (shared subexpressions
// merged, casts inserted, sinks last), and every error with its position and name.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "tilegraph/evg/frontend/dag.h"
#include "tilegraph/evg/frontend/lower.h"

namespace tg::evg::frontend {
namespace {

Signature gemm_signature() {
  Signature sig;
  sig.input("alpha", OperandKind::kScalar)
      .input("bias", OperandKind::kRowVector)
      .input("scale", OperandKind::kColVector)
      .input("C")
      .input("X")
      .input("H", OperandKind::kMatrix, ElementType::kF16)
      .input("I", OperandKind::kMatrix, ElementType::kI32)
      .input("B", OperandKind::kMatrix, ElementType::kBF16)
      .output("D")
      .output("D16", OperandKind::kMatrix, ElementType::kF16)
      .output("r", OperandKind::kRowVector)
      .output("s", OperandKind::kColVector);
  return sig;
}

// A signature with only what `names` lists (inputs first, then outputs), from gemm_signature.
Signature only(const std::vector<std::string>& names) {
  const Signature all = gemm_signature();
  Signature sig;
  for (const std::string& n : names) {
    if (const OperandDecl* d = all.find_input(n)) sig.inputs.push_back(*d);
    if (const OperandDecl* d = all.find_output(n)) sig.outputs.push_back(*d);
  }
  return sig;
}

std::string ops(const EpilogueDag& dag) {
  std::string s;
  for (const DagNode& n : dag.nodes) {
    if (!s.empty()) s += " ";
    switch (n.op) {
      case DagOp::kAcc: s += "acc"; break;
      case DagOp::kLoad: s += "load:" + n.operand; break;
      case DagOp::kRowInput: s += n.operand + "[col]"; break;
      case DagOp::kColInput: s += n.operand + "[row]"; break;
      case DagOp::kScalarInput: s += "scalar:" + n.operand; break;
      case DagOp::kConstant: s += "const:" + std::to_string(n.params[0]).substr(0, 4); break;
      case DagOp::kCast: s += "cast:" + std::string(element_name(n.type)); break;
      case DagOp::kCompute: s += n.function; break;
      case DagOp::kStore: s += "store:" + n.operand; break;
      case DagOp::kRowReduce: s += "row_" + n.function + ":" + n.operand; break;
      case DagOp::kColReduce: s += "col_" + n.function + ":" + n.operand; break;
    }
    if (!n.inputs.empty()) {
      s += "(";
      for (size_t k = 0; k < n.inputs.size(); ++k) {
        if (k) s += ",";
        s += std::to_string(n.inputs[k]);
      }
      s += ")";
    }
  }
  return s;
}

TEST(EvgFrontEnd, GeluBiasBecomesAChain) {
  const EpilogueDag dag = build_dag("D = gelu(acc * alpha + bias[col])", only({"alpha", "bias", "D"}));
  EXPECT_EQ(ops(dag), "acc scalar:alpha Multiplies(0,1) bias[col] Plus(2,3) GELU(4) store:D(5)");
  ASSERT_EQ(dag.operands.size(), 3u);
  EXPECT_EQ(dag.operands[0].name, "alpha");
  EXPECT_EQ(dag.operands[1].name, "bias");
  EXPECT_EQ(dag.operands[2].name, "D");
  EXPECT_EQ(dag.nodes[3].extent, Extent::kRow);
  EXPECT_EQ(dag.nodes[4].extent, Extent::kTile);
}

TEST(EvgFrontEnd, SharedSubexpressionsAreComputedOnce) {
  // Catlass EVG's example (C+X)+(C+X): one load per operand, one C+X.
  EXPECT_EQ(ops(build_dag("D = (C + X) + (C + X)", only({"C", "X", "D"}))),
            "load:C load:X Plus(0,1) Plus(2,2) store:D(3)");
  // A named value used by several statements, extra outputs, comments and new lines.
  const EpilogueDag dag = build_dag(
      "t = acc + C   # shared\n"
      "D = t\n"
      "r = row_sum(t); s = col_max(relu(t))",
      only({"C", "D", "r", "s"}));
  EXPECT_EQ(ops(dag), "acc load:C Plus(0,1) store:D(2) row_sum:r(2) ReLU(2) col_max:s(5)");
  // Statements may come in any order; identical literals are one node.
  EXPECT_EQ(ops(build_dag("D = u * 2 + 2; u = acc", only({"D"}))),
            "acc const:2.00 Multiplies(0,1) Plus(2,1) store:D(3)");
}

TEST(EvgFrontEnd, CastsAndTypes) {
  // f16 and bf16 inputs widen to f32 by themselves (exactly); narrowing is explicit.
  EXPECT_EQ(ops(build_dag("D16 = f16(acc + H, rz)", only({"H", "D16"}))),
            "acc load:H cast:f32(1) Plus(0,2) cast:f16(3) store:D16(4)");
  const EpilogueDag dag = build_dag("D16 = f16(acc, rz)", only({"D16"}));
  EXPECT_EQ(dag.nodes[1].round, RoundMode::kTowardZero);
  // i32 needs an explicit cast, with any rounding mode.
  const EpilogueDag with_i32 = build_dag("D = acc * f32(I, rd)", only({"I", "D"}));
  EXPECT_EQ(ops(with_i32), "acc load:I cast:f32(1) Multiplies(0,2) store:D(3)");
  EXPECT_EQ(with_i32.nodes[2].round, RoundMode::kTowardNegInf);
  // An f16 value into an f32 output widens; functions with literal arguments.
  EXPECT_EQ(ops(build_dag("D = clamp(leaky_relu(f16(acc), -0.5), -1, 1e3)", only({"D"}))),
            "acc cast:f16(0) cast:f32(1) LeakyReLU(2) Clamp(3) store:D(4)");
  const EpilogueDag literals = build_dag("D = clamp(leaky_relu(acc, -0.5), -1, 1e3)", only({"D"}));
  EXPECT_EQ(literals.nodes[1].params, std::vector<float>({-0.5f}));
  EXPECT_EQ(literals.nodes[2].params, std::vector<float>({-1.0f, 1000.0f}));
}

// The error's message, position and name.
struct Failure {
  std::string message;
  int line = 0, column = 0;
  std::string name;
};

Failure failure_of(const std::string& source, const Signature& sig) {
  try {
    build_dag(source, sig);
  } catch (const FrontEndError& e) {
    return {e.what(), e.position().line, e.position().column, e.name()};
  }
  ADD_FAILURE() << "no error for: " << source;
  return {};
}

void expect_error(const std::string& source, const Signature& sig, int line, int column, const std::string& name,
                  const std::string& message) {
  const Failure f = failure_of(source, sig);
  EXPECT_EQ(f.message, message) << source;
  EXPECT_EQ(f.line, line) << source;
  EXPECT_EQ(f.column, column) << source;
  EXPECT_EQ(f.name, name) << source;
}

TEST(EvgFrontEnd, SyntaxErrors) {
  const Signature d = only({"D"});
  expect_error("", d, 1, 1, "", "evg: 1:1: empty epilogue: expected statements like 'D = acc'");
  expect_error("D acc", d, 1, 3, "acc", "evg: 1:3: expected '=' after 'D', found 'acc'");
  expect_error("D = (acc + 1", d, 1, 13, "",
               "evg: 1:13: expected ')' to close the '(' at column 5, found the end of the epilogue");
  expect_error("D = acc +", d, 1, 10, "", "evg: 1:10: expected a value, found the end of the epilogue");
  expect_error("D = acc 2", d, 1, 9, "2", "evg: 1:9: expected ';' or a new line before '2'");
  expect_error("D = 1.2.3", d, 1, 5, "1.2.3", "evg: 1:5: '1.2.3' is not a number (or does not fit in f32)");
  expect_error("D = 1e99", d, 1, 5, "1e99", "evg: 1:5: '1e99' is not a number (or does not fit in f32)");
  expect_error("D = acc\n  + = 2", d, 2, 3, "+", "evg: 2:3: expected the name of an output or value, found '+'");
  expect_error("D = relu(acc", d, 1, 13, "",
               "evg: 1:13: expected ')' to close the call of 'relu' at column 9, found the end of the epilogue");
  // A UTF-8 character is quoted whole, a control byte by its value.
  expect_error("D = acc \u00d7 2", d, 1, 9, "\u00d7", "evg: 1:9: expected ';' or a new line before '\u00d7'");
  expect_error(
      "D = \x01"
      "acc",
      d, 1, 5, "\x01", "evg: 1:5: expected a value, found byte 0x01");
}

TEST(EvgFrontEnd, NameAndTypeErrors) {
  expect_error("D = acc + Cx", only({"C", "D"}), 1, 11, "Cx", "evg: 1:11: unknown name 'Cx' (declared: acc, C, D)");
  expect_error("D = foo(acc)", only({"D"}), 1, 5, "foo",
               "evg: 1:5: unknown function 'foo' (known: relu, gelu, gelu_erf, silu, sigmoid, tanh, exp, neg, abs, "
               "square, max, min, fma, clamp, leaky_relu, f32, f16, bf16, i8, i32 (casts), row_/col_ sum, max, min "
               "(reductions))");
  expect_error("D = max(acc)", only({"D"}), 1, 5, "max", "evg: 1:5: max takes 2 values, got 1");
  expect_error("D = clamp(acc, 1)", only({"D"}), 1, 5, "clamp", "evg: 1:5: clamp takes 1 value and 2 number(s), got 2");
  expect_error("D = clamp(acc, acc, 1)", only({"D"}), 1, 16, "acc", "evg: 1:16: argument 2 of clamp must be a number");
  expect_error("D = acc + I", only({"I", "D"}), 1, 11, "'+'",
               "evg: 1:11: type mismatch: '+' takes f32 values, this one is i32 (convert it with f32(...), choosing "
               "a rounding mode)");
  expect_error("D16 = acc + 1", only({"D16"}), 1, 1, "D16",
               "evg: 1:1: type mismatch: output 'D16' is f16 but its value is f32: write D16 = f16(...)");
  expect_error("D16 = f16(B)", only({"B", "D16"}), 1, 7, "f16",
               "evg: 1:7: casts convert from or to f32; this one is bf16 -> f16: write f16(f32(...))");
  expect_error("D = f32(acc, up)", only({"D"}), 1, 14, "up",
               "evg: 1:14: unknown rounding mode 'up' (rne, rna, rz, ru, rd, ra, ro)");
  expect_error("D = acc + bias", only({"bias", "D"}), 1, 11, "bias",
               "evg: 1:11: 'bias' is a row vector indexed by column: write bias[col]");
  expect_error("D = acc + bias[row]", only({"bias", "D"}), 1, 11, "bias",
               "evg: 1:11: 'bias' is a row vector: write bias[col]");
  expect_error("D = acc + scale", only({"scale", "D"}), 1, 11, "scale",
               "evg: 1:11: 'scale' is a column vector indexed by row: write scale[row]");
  expect_error("D = acc + C[col]", only({"C", "D"}), 1, 11, "C", "evg: 1:11: 'C' is a matrix: write C");
  expect_error("D = acc[col]", only({"D"}), 1, 5, "acc",
               "evg: 1:5: only vector inputs can be indexed, and 'acc' is not one");
}

TEST(EvgFrontEnd, StructureErrors) {
  expect_error("D = a\na = b + acc\nb = a * 2", only({"D"}), 3, 5, "a", "evg: 3:5: cycle: a -> b -> a");
  expect_error("D = D + acc", only({"D"}), 1, 5, "D", "evg: 1:5: cycle: D -> D");
  expect_error("D = acc; D = acc * 2", only({"D"}), 1, 10, "D", "evg: 1:10: 'D' is assigned twice (first at 1:1)");
  expect_error("C = acc", only({"C"}), 1, 1, "C",
               "evg: 1:1: 'C' is an input; outputs and local values need other names");
  expect_error("acc = acc", only({}), 1, 1, "acc", "evg: 1:1: 'acc' is reserved and cannot be assigned");
  expect_error("t = acc * 2; D = acc", only({"D"}), 1, 1, "t",
               "evg: 1:1: 't' is computed but never used (not an output: declare it or remove it)");
  expect_error("D = acc", only({"C", "D"}), 1, 1, "C", "evg: 1:1: input 'C' is declared but never used");
  expect_error("D = acc", only({"D", "D16"}), 1, 1, "D16", "evg: 1:1: output 'D16' is never assigned");
  expect_error("D = row_sum(acc)", only({"D"}), 1, 5, "row_sum",
               "evg: 1:5: row_sum(...) reduces over the whole output: it can only be the entire value of a "
               "row-vector output");
  expect_error("r = col_sum(acc)", only({"r"}), 1, 5, "col_sum",
               "evg: 1:5: output 'r' is a row vector: its value must be a reduction, row_sum, row_max or row_min");
  expect_error("D = r + acc; r = row_sum(acc)", only({"D", "r"}), 1, 5, "r",
               "evg: 1:5: 'r' is a reduction over the whole output: it is only available after every block, so "
               "nothing in the epilogue can use it");
  expect_error("t = row_max(acc); D = acc", only({"D"}), 1, 5, "row_max",
               "evg: 1:5: row_max(...) reduces over the whole output: it can only be the entire value of a "
               "row-vector output");
}

TEST(EvgFrontEnd, SignatureErrors) {
  const auto error_of = [](const Signature& sig) -> std::string {
    try {
      build_dag("D = acc", sig);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(error_of(Signature().output("D").output("D")), "evg signature: 'D' is declared twice");
  EXPECT_EQ(error_of(Signature().input("acc").output("D")),
            "evg signature: 'acc' is reserved and cannot name an input");
  EXPECT_EQ(error_of(Signature().output("D").output("x", OperandKind::kScalar)),
            "evg signature: output 'x' is a scalar; outputs are matrices or reductions");
  EXPECT_EQ(error_of(Signature().output("D").output("r", OperandKind::kRowVector, ElementType::kI32)),
            "evg signature: output 'r' is a row vector of i32; reductions produce f32");
  EXPECT_EQ(error_of(Signature().input("a", OperandKind::kScalar, ElementType::kF16).output("D")),
            "evg signature: scalar input 'a' must be f32");
}

TEST(EvgFrontEnd, LoweringInstantiatesTheTemplates) {
  const EpilogueDag dag = build_dag("D = (C + X) + (C + X)\nr = row_sum(D)", only({"C", "X", "D", "r"}));
  LowerOptions options;
  options.lanes = 8;
  options.target = "avx2,fma,f16c";
  options.compute_length = 1024;
  options.source_text = "D = (C + X) + (C + X)\nr = row_sum(D)";
  const std::string cpp = lower_to_cpp(dag, options);
  const auto count = [&](const std::string& what) {
    size_t n = 0;
    for (size_t at = cpp.find(what); at != std::string::npos; at = cpp.find(what, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("tg::evg::VisitorCompute<tg::evg::fn::Plus>"), 2u);  // C + X once, then the sum
  EXPECT_EQ(count("tg::evg::VisitorAuxLoad<float, tg::evg::layout::Strided>"), 2u);
  EXPECT_EQ(count("tg::evg::VisitorRowReduce<tg::evg::reduce::Sum>"), 1u);
  EXPECT_NE(cpp.find("std::tuple<tg::evg::Seq<>, tg::evg::Seq<>, tg::evg::Seq<0, 1>, tg::evg::Seq<2, 2>, "
                     "tg::evg::Seq<3>, tg::evg::Seq<3>>"),
            std::string::npos);
  EXPECT_NE(cpp.find("using Arch = tg::evg::arch::Cpu<8, true>;"), std::string::npos);
  EXPECT_NE(cpp.find("tg::evg::BlockEpilogue<Arch, 1024, EVG>"), std::string::npos);
  EXPECT_NE(cpp.find("#pragma GCC target(\"avx2,fma,f16c\")"), std::string::npos);
  EXPECT_NE(cpp.find("//   r = row_sum(D)\n"), std::string::npos);
  EXPECT_NE(cpp.find("{static_cast<float*>(b[3].data), b[3].col_stride}"), std::string::npos);
  // Literals are written so that they read back bit for bit.
  const std::string lit = lower_to_cpp(build_dag("D = acc * 0.1", only({"D"})), LowerOptions{});
  EXPECT_NE(lit.find("{0x1.99999ap-4f}"), std::string::npos);
}

// Sources a few edits away from valid ones (characters deleted, inserted, replaced or copied
// around): each either becomes a DAG that lowers, or raises a FrontEndError at a position inside
// the source; nothing else escapes.
TEST(EvgFrontEnd, MutatedSourcesAreAcceptedOrRejectedAtAPosition) {
  struct Seed {
    std::string source;
    Signature signature;
  };
  const std::vector<Seed> seeds = {
      {"D = gelu(acc * alpha + bias[col])", only({"alpha", "bias", "D"})},
      {"t = acc * scale[row] + C + bias[col]\nD = t\nD16 = f16(relu(t))\nr = row_sum(t)\ns = col_max(t)\n",
       only({"scale", "C", "bias", "D", "D16", "r", "s"})},
      {"D = max(acc, 0.5) * alpha - min(C, bias[col]) / 3; r = row_min(D)", only({"alpha", "C", "bias", "D", "r"})},
      {"D = clamp(f32(H) + acc, -1, 1)\ns = col_sum(D)", only({"H", "D", "s"})},
  };
  const std::string alphabet = "acdefglmnorstuwxCDHr0123456789_ \n=+-*/(),.;[]#$\"'\x01\xff";
  std::mt19937 rng(11);
  int accepted = 0, rejected = 0;
  for (int i = 0; i < 20000; ++i) {
    const Seed& seed = seeds[rng() % seeds.size()];
    std::string source = seed.source;
    for (int edits = 1 + int(rng() % 2); edits > 0; --edits) {
      const size_t at = rng() % (source.size() + 1);
      switch (rng() % 4) {
        case 0: source.erase(at, 1 + rng() % 3); break;
        case 1: source.insert(at, 1, alphabet[rng() % alphabet.size()]); break;
        case 2:
          if (at < source.size()) source[at] = alphabet[rng() % alphabet.size()];
          break;
        default: source.insert(at, seed.source.substr(rng() % seed.source.size(), 1 + rng() % 6)); break;
      }
    }
    try {
      const EpilogueDag dag = build_dag(source, seed.signature);
      EXPECT_FALSE(lower_to_cpp(dag, LowerOptions{}).empty()) << source;
      ++accepted;
    } catch (const FrontEndError& e) {
      const int lines = 1 + int(std::count(source.begin(), source.end(), '\n'));
      EXPECT_TRUE(e.position().line >= 1 && e.position().line <= lines && e.position().column >= 1)
          << "[" << source << "]: " << e.what();
      ++rejected;
    }
  }
  // Both outcomes are common: the edits neither always break a source nor never do.
  EXPECT_GT(accepted, 200);
  EXPECT_GT(rejected, 5000);
}

}  // namespace
}  // namespace tg::evg::frontend
