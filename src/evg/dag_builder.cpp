// Name resolution, type checking and DAG construction for string epilogues (frontend/dag.h).
#include <cstring>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tilegraph/core/error.h"
#include "tilegraph/evg/frontend/dag.h"

namespace tg::evg::frontend {

const std::vector<FunctionInfo>& compute_functions() {
  static const std::vector<FunctionInfo> functions = {
      {"relu", "ReLU", 1, 0},       {"gelu", "GELU", 1, 0},       {"gelu_erf", "GELUErf", 1, 0},
      {"silu", "SiLU", 1, 0},       {"sigmoid", "Sigmoid", 1, 0}, {"tanh", "Tanh", 1, 0},
      {"exp", "Exp", 1, 0},         {"neg", "Negate", 1, 0},      {"abs", "Absolute", 1, 0},
      {"square", "Square", 1, 0},   {"max", "Maximum", 2, 0},     {"min", "Minimum", 2, 0},
      {"fma", "MultiplyAdd", 3, 0}, {"clamp", "Clamp", 1, 2},     {"leaky_relu", "LeakyReLU", 1, 1},
  };
  return functions;
}

namespace {

bool exact_to_f32(ElementType t) { return t == ElementType::kF16 || t == ElementType::kBF16 || t == ElementType::kI8; }

const FunctionInfo* find_function(std::string_view name) {
  for (const FunctionInfo& f : compute_functions()) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

void check_signature(const Signature& sig) {
  std::set<std::string> names;
  const auto claim = [&](const OperandDecl& d, const char* what) {
    if (d.name == "acc" || d.name == "row" || d.name == "col") {
      throw Error("evg signature: '" + d.name + "' is reserved and cannot name an " + what);
    }
    if (d.name.empty()) throw Error(std::string("evg signature: an ") + what + " has no name");
    if (!names.insert(d.name).second) throw Error("evg signature: '" + d.name + "' is declared twice");
  };
  for (const OperandDecl& d : sig.inputs) {
    claim(d, "input");
    if (d.kind == OperandKind::kScalar && d.type != ElementType::kF32) {
      throw Error("evg signature: scalar input '" + d.name + "' must be f32");
    }
  }
  for (const OperandDecl& d : sig.outputs) {
    claim(d, "output");
    if (d.kind == OperandKind::kScalar) {
      throw Error("evg signature: output '" + d.name + "' is a scalar; outputs are matrices or reductions");
    }
    if (d.kind != OperandKind::kMatrix && d.type != ElementType::kF32) {
      throw Error("evg signature: output '" + d.name + "' is a " + std::string(kind_name(d.kind)) + " of " +
                  std::string(element_name(d.type)) + "; reductions produce f32");
    }
  }
}

std::string list_names(const Signature& sig) {
  std::string s;
  for (const auto* list : {&sig.inputs, &sig.outputs}) {
    for (const OperandDecl& d : *list) s += (s.empty() ? "" : ", ") + d.name;
  }
  return s.empty() ? "acc only" : "acc, " + s;
}

std::string list_functions() {
  std::string s;
  for (const FunctionInfo& f : compute_functions()) s += std::string(f.name) + ", ";
  return s + "f32, f16, bf16, i8, i32 (casts), row_/col_ sum, max, min (reductions)";
}

class Builder {
 public:
  Builder(const Program& program, const Signature& sig) : program_(program), sig_(sig) {}

  EpilogueDag build() {
    check_signature(sig_);
    for (const Statement& s : program_.statements) {
      if (s.target == "acc" || s.target == "row" || s.target == "col") {
        throw FrontEndError(s.position, s.target, "'" + s.target + "' is reserved and cannot be assigned");
      }
      if (sig_.find_input(s.target)) {
        throw FrontEndError(s.position, s.target,
                            "'" + s.target + "' is an input; outputs and local values need other names");
      }
      bool over_rows;
      std::string fn;
      if (!sig_.find_output(s.target) && s.value->kind == Expr::Kind::kCall &&
          parse_reduction(s.value->name, over_rows, fn)) {
        throw reduction_misuse(*s.value, over_rows);
      }
      const auto [it, added] = statements_.emplace(s.target, &s);
      if (!added) {
        throw FrontEndError(s.position, s.target,
                            "'" + s.target + "' is assigned twice (first at " + where(it->second->position) + ")");
      }
    }
    for (const Statement& s : program_.statements) {
      if (const OperandDecl* out = sig_.find_output(s.target)) emit_output(s, *out);
    }
    for (const OperandDecl& out : sig_.outputs) {
      if (!statements_.count(out.name))
        throw FrontEndError({1, 1}, out.name, "output '" + out.name + "' is never assigned");
    }
    for (const Statement& s : program_.statements) {
      if (!sig_.find_output(s.target) && !referenced_.count(s.target)) {
        throw FrontEndError(s.position, s.target,
                            "'" + s.target + "' is computed but never used (not an output: declare it or remove it)");
      }
    }
    for (const OperandDecl& in : sig_.inputs) {
      if (!used_inputs_.count(in.name))
        throw FrontEndError({1, 1}, in.name, "input '" + in.name + "' is declared but never used");
    }
    return std::move(dag_);
  }

 private:
  static FrontEndError reduction_misuse(const Expr& call, bool over_rows) {
    return FrontEndError(call.position, call.name,
                         call.name + "(...) reduces over the whole output: it can only be the entire value of a " +
                             (over_rows ? "row" : "column") + "-vector output");
  }

  static std::string where(SourcePosition p) { return std::to_string(p.line) + ":" + std::to_string(p.column); }

  const DagNode& node(int i) const { return dag_.nodes[size_t(i)]; }

  // Adds a node, or returns the identical pure node already there.
  int add(DagNode n, bool pure = true) {
    std::string key;
    if (pure) {
      std::ostringstream k;
      k << int(n.op) << '|' << int(n.type) << '|' << n.function << '|' << int(n.round) << '|' << n.operand << '|';
      for (float p : n.params) {
        uint32_t bits;
        std::memcpy(&bits, &p, sizeof bits);
        k << bits << ',';
      }
      for (int i : n.inputs) k << '|' << i;
      key = k.str();
      if (const auto it = cse_.find(key); it != cse_.end()) return it->second;
    }
    if (n.op != DagOp::kAcc && n.op != DagOp::kConstant && n.op != DagOp::kCast && n.op != DagOp::kCompute) {
      note_operand(n.operand);
    }
    dag_.nodes.push_back(std::move(n));
    const int index = int(dag_.nodes.size()) - 1;
    if (pure) cse_.emplace(key, index);
    return index;
  }

  void note_operand(const std::string& name) {
    for (const OperandDecl& d : dag_.operands) {
      if (d.name == name) return;
    }
    const OperandDecl* decl = sig_.find_input(name);
    if (!decl) decl = sig_.find_output(name);
    dag_.operands.push_back(*decl);
  }

  int cast(int from, ElementType to, RoundMode mode, SourcePosition position) {
    if (node(from).type == to) return from;
    DagNode n;
    n.op = DagOp::kCast;
    n.type = to;
    n.extent = node(from).extent;
    n.inputs = {from};
    n.round = mode;
    n.position = position;
    return add(std::move(n));
  }

  // The value as f32 for arithmetic: exact widenings happen silently, others are errors.
  int as_f32(int value, SourcePosition position, const std::string& what) {
    const ElementType t = node(value).type;
    if (t == ElementType::kF32) return value;
    if (exact_to_f32(t)) return cast(value, ElementType::kF32, RoundMode::kNearestEven, position);
    throw FrontEndError(position, what,
                        "type mismatch: " + what + " takes f32 values, this one is " + std::string(element_name(t)) +
                            " (convert it with f32(...), choosing a rounding mode)");
  }

  int compute(const std::string& functor, std::vector<int> inputs, std::vector<float> params, SourcePosition position) {
    DagNode n;
    n.op = DagOp::kCompute;
    n.function = functor;
    n.params = std::move(params);
    n.extent = Extent::kScalar;
    for (int i : inputs) n.extent = join(n.extent, node(i).extent);
    n.inputs = std::move(inputs);
    n.position = position;
    return add(std::move(n));
  }

  void emit_output(const Statement& s, const OperandDecl& out) {
    const Expr& value = *s.value;
    bool over_rows = false;
    std::string fn;
    const bool reduction = value.kind == Expr::Kind::kCall && parse_reduction(value.name, over_rows, fn);
    if (out.kind != OperandKind::kMatrix) {
      const bool want_rows = out.kind == OperandKind::kRowVector;
      const char* expected = want_rows ? "row_sum, row_max or row_min" : "col_sum, col_max or col_min";
      if (!reduction || over_rows != want_rows) {
        throw FrontEndError(value.position, value.name,
                            "output '" + out.name + "' is a " + std::string(kind_name(out.kind)) +
                                ": its value must be a reduction, " + expected);
      }
      if (value.args.size() != 1) {
        throw FrontEndError(value.position, value.name,
                            value.name + " takes 1 argument, got " + std::to_string(value.args.size()));
      }
      const int input = as_f32(eval(*value.args[0]), value.args[0]->position, "'" + value.name + "'");
      DagNode n;
      n.op = want_rows ? DagOp::kRowReduce : DagOp::kColReduce;
      n.function = fn;
      n.operand = out.name;
      n.extent = node(input).extent;
      n.inputs = {input};
      n.position = s.position;
      add(std::move(n), false);
      resolved_[out.name] = -1;
      return;
    }
    int v = resolve(s.target, s.position);
    if (node(v).type != out.type) {
      if (out.type == ElementType::kF32 && exact_to_f32(node(v).type)) {
        v = cast(v, ElementType::kF32, RoundMode::kNearestEven, s.position);
      } else {
        throw FrontEndError(s.position, out.name,
                            "type mismatch: output '" + out.name + "' is " + std::string(element_name(out.type)) +
                                " but its value is " + std::string(element_name(node(v).type)) + ": write " + out.name +
                                " = " + std::string(element_name(out.type)) + "(...)");
      }
    }
    DagNode n;
    n.op = DagOp::kStore;
    n.type = out.type;
    n.operand = out.name;
    n.extent = node(v).extent;
    n.inputs = {v};
    n.position = s.position;
    add(std::move(n), false);
  }

  // The value a statement's name stands for (its value before any store).
  int resolve(const std::string& name, SourcePosition reference) {
    if (const auto it = resolved_.find(name); it != resolved_.end()) {
      if (it->second < 0) {
        throw FrontEndError(reference, name,
                            "'" + name +
                                "' is a reduction over the whole output: it is only available after "
                                "every block, so nothing in the epilogue can use it");
      }
      return it->second;
    }
    for (size_t i = 0; i < resolving_.size(); ++i) {
      if (resolving_[i] != name) continue;
      std::string cycle;
      for (size_t j = i; j < resolving_.size(); ++j) cycle += resolving_[j] + " -> ";
      throw FrontEndError(reference, name, "cycle: " + cycle + name);
    }
    const Statement& s = *statements_.at(name);
    const OperandDecl* out = sig_.find_output(name);
    if (out && out->kind != OperandKind::kMatrix) {
      throw FrontEndError(reference, name,
                          "'" + name +
                              "' is a reduction over the whole output: it is only available after every "
                              "block, so nothing in the epilogue can use it");
    }
    resolving_.push_back(name);
    const int v = eval(*s.value);
    resolving_.pop_back();
    resolved_[name] = v;
    return v;
  }

  int eval(const Expr& e) {
    switch (e.kind) {
      case Expr::Kind::kNumber: {
        DagNode n;
        n.op = DagOp::kConstant;
        n.extent = Extent::kScalar;
        n.params = {e.number};
        n.position = e.position;
        return add(std::move(n));
      }
      case Expr::Kind::kName: return eval_name(e);
      case Expr::Kind::kIndex: return eval_index(e);
      case Expr::Kind::kNegate:
        return compute("Negate", {as_f32(eval(*e.args[0]), e.args[0]->position, "'-'")}, {}, e.position);
      case Expr::Kind::kBinary: {
        const std::string what = std::string("'") + e.op + "'";
        const int a = as_f32(eval(*e.args[0]), e.args[0]->position, what);
        const int b = as_f32(eval(*e.args[1]), e.args[1]->position, what);
        const char* functor = e.op == '+' ? "Plus" : e.op == '-' ? "Minus" : e.op == '*' ? "Multiplies" : "Divides";
        return compute(functor, {a, b}, {}, e.position);
      }
      case Expr::Kind::kCall: return eval_call(e);
    }
    throw Error("evg: unknown expression kind");
  }

  int eval_name(const Expr& e) {
    if (e.name == "acc") {
      DagNode n;
      n.op = DagOp::kAcc;
      n.position = e.position;
      return add(std::move(n));
    }
    if (statements_.count(e.name)) {
      referenced_.insert(e.name);
      return resolve(e.name, e.position);
    }
    if (const OperandDecl* in = sig_.find_input(e.name)) {
      used_inputs_.insert(e.name);
      DagNode n;
      n.type = in->type;
      n.operand = in->name;
      n.position = e.position;
      switch (in->kind) {
        case OperandKind::kMatrix:
          n.op = DagOp::kLoad;
          n.extent = Extent::kTile;
          break;
        case OperandKind::kScalar:
          n.op = DagOp::kScalarInput;
          n.extent = Extent::kScalar;
          break;
        case OperandKind::kRowVector:
          throw FrontEndError(e.position, e.name,
                              "'" + e.name + "' is a row vector indexed by column: write " + e.name + "[col]");
        case OperandKind::kColVector:
          throw FrontEndError(e.position, e.name,
                              "'" + e.name + "' is a column vector indexed by row: write " + e.name + "[row]");
      }
      return add(std::move(n));
    }
    if (sig_.find_output(e.name)) {
      throw FrontEndError(e.position, e.name, "output '" + e.name + "' is used but never assigned");
    }
    throw FrontEndError(e.position, e.name, "unknown name '" + e.name + "' (declared: " + list_names(sig_) + ")");
  }

  int eval_index(const Expr& e) {
    const OperandDecl* in = sig_.find_input(e.name);
    if (!in) {
      if (statements_.count(e.name) || sig_.find_output(e.name) || e.name == "acc") {
        throw FrontEndError(e.position, e.name, "only vector inputs can be indexed, and '" + e.name + "' is not one");
      }
      throw FrontEndError(e.position, e.name, "unknown name '" + e.name + "' (declared: " + list_names(sig_) + ")");
    }
    const OperandKind wanted = e.index == "col" ? OperandKind::kRowVector : OperandKind::kColVector;
    if (in->kind != wanted) {
      std::string fix = in->kind == OperandKind::kRowVector   ? e.name + "[col]"
                        : in->kind == OperandKind::kColVector ? e.name + "[row]"
                                                              : e.name;
      throw FrontEndError(e.position, e.name,
                          "'" + e.name + "' is a " + std::string(kind_name(in->kind)) + ": write " + fix);
    }
    used_inputs_.insert(e.name);
    DagNode n;
    n.op = e.index == "col" ? DagOp::kRowInput : DagOp::kColInput;
    n.extent = e.index == "col" ? Extent::kRow : Extent::kCol;
    n.type = in->type;
    n.operand = in->name;
    n.position = e.position;
    return add(std::move(n));
  }

  int eval_call(const Expr& e) {
    const auto arity_error = [&](const std::string& expected) {
      return FrontEndError(e.position, e.name,
                           e.name + " takes " + expected + ", got " + std::to_string(e.args.size()));
    };
    ElementType to;
    if (parse_element(e.name, to)) {
      if (e.args.empty() || e.args.size() > 2) throw arity_error("a value and an optional rounding mode");
      RoundMode mode = RoundMode::kNearestEven;
      if (e.args.size() == 2) {
        const Expr& m = *e.args[1];
        bool found = false;
        for (RoundMode candidate : kAllRoundModes) {
          if (m.kind == Expr::Kind::kName && m.name == round_mode_name(candidate)) {
            mode = candidate;
            found = true;
          }
        }
        if (!found) {
          throw FrontEndError(m.position, m.name,
                              "unknown rounding mode" + (m.name.empty() ? std::string() : " '" + m.name + "'") +
                                  " (rne, rna, rz, ru, rd, ra, ro)");
        }
      }
      const int from = eval(*e.args[0]);
      const ElementType t = node(from).type;
      if (t != ElementType::kF32 && to != ElementType::kF32 && t != to) {
        throw FrontEndError(e.position, e.name,
                            "casts convert from or to f32; this one is " + std::string(element_name(t)) + " -> " +
                                std::string(element_name(to)) + ": write " + e.name + "(f32(...))");
      }
      return cast(from, to, mode, e.position);
    }
    bool over_rows;
    std::string fn;
    if (parse_reduction(e.name, over_rows, fn)) throw reduction_misuse(e, over_rows);
    const FunctionInfo* f = find_function(e.name);
    if (!f)
      throw FrontEndError(e.position, e.name, "unknown function '" + e.name + "' (known: " + list_functions() + ")");
    if (int(e.args.size()) != f->arity + f->literal_params) {
      std::string expected = std::to_string(f->arity) + (f->arity == 1 ? " value" : " values");
      if (f->literal_params) expected += " and " + std::to_string(f->literal_params) + " number(s)";
      throw arity_error(expected);
    }
    std::vector<int> inputs;
    for (int i = 0; i < f->arity; ++i) {
      inputs.push_back(as_f32(eval(*e.args[size_t(i)]), e.args[size_t(i)]->position, "'" + e.name + "'"));
    }
    std::vector<float> params;
    for (size_t i = size_t(f->arity); i < e.args.size(); ++i) {
      const Expr& a = *e.args[i];
      if (a.kind == Expr::Kind::kNumber) {
        params.push_back(a.number);
      } else if (a.kind == Expr::Kind::kNegate && a.args[0]->kind == Expr::Kind::kNumber) {
        params.push_back(-a.args[0]->number);
      } else {
        throw FrontEndError(a.position, a.name,
                            "argument " + std::to_string(i + 1) + " of " + e.name + " must be a number");
      }
    }
    return compute(std::string(f->functor), std::move(inputs), std::move(params), e.position);
  }

  const Program& program_;
  const Signature& sig_;
  EpilogueDag dag_;
  std::map<std::string, const Statement*> statements_;
  std::map<std::string, int> resolved_;  // -1: a reduction output
  std::vector<std::string> resolving_;
  std::set<std::string> referenced_;
  std::set<std::string> used_inputs_;
  std::map<std::string, int> cse_;
};

}  // namespace

bool parse_reduction(std::string_view name, bool& over_rows, std::string& fn) {
  for (const char* prefix : {"row_", "col_"}) {
    if (name.substr(0, 4) != prefix) continue;
    const std::string_view rest = name.substr(4);
    if (rest == "sum" || rest == "max" || rest == "min") {
      over_rows = prefix[0] == 'r';
      fn = std::string(rest);
      return true;
    }
  }
  return false;
}

EpilogueDag build_dag(const Program& program, const Signature& signature) {
  return Builder(program, signature).build();
}

EpilogueDag build_dag(std::string_view source, const Signature& signature) {
  return build_dag(parse_program(source), signature);
}

}  // namespace tg::evg::frontend
