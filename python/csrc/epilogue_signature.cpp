#include "epilogue_signature.h"

#include <algorithm>
#include <map>
#include <string>

#include "tilegraph/evg/frontend/ast.h"
#include "tilegraph/evg/frontend/dag.h"

namespace tg::python {

using evg::frontend::ElementType;
using evg::frontend::Expr;
using evg::frontend::OperandKind;
using evg::frontend::Program;
using evg::frontend::Signature;

namespace {

// How each name is first read: as a matrix, or indexed as a row or column vector.
void note_uses(const Expr& e, std::map<std::string, OperandKind, std::less<>>& uses) {
  if (e.kind == Expr::Kind::kName) uses.emplace(e.name, OperandKind::kMatrix);
  if (e.kind == Expr::Kind::kIndex) {
    uses.emplace(e.name, e.index == "col" ? OperandKind::kRowVector : OperandKind::kColVector);
  }
  for (const auto& arg : e.args) note_uses(*arg, uses);
}

OperandKind output_kind(const Expr& value) {
  bool over_rows = false;
  std::string fn;
  if (value.kind != Expr::Kind::kCall || !evg::frontend::parse_reduction(value.name, over_rows, fn)) {
    return OperandKind::kMatrix;
  }
  return over_rows ? OperandKind::kRowVector : OperandKind::kColVector;
}

}  // namespace

Signature infer_signature(std::string_view epilogue, const std::vector<TensorOperand>& tensors,
                          const std::vector<std::string>& scalars, const std::vector<std::string>& outputs,
                          std::optional<ElementType> out_type) {
  const Program program = evg::frontend::parse_program(epilogue);
  std::map<std::string, OperandKind, std::less<>> uses;
  for (const auto& statement : program.statements) note_uses(*statement.value, uses);

  Signature sig;
  for (const TensorOperand& t : tensors) {
    const auto use = uses.find(t.name);
    // One never read gets the kind its shape suggests; the front end then says it is unused.
    const OperandKind kind = use != uses.end() ? use->second
                             : t.dims == 1     ? OperandKind::kRowVector
                                               : OperandKind::kMatrix;
    sig.input(t.name, kind, t.type);
  }
  for (const std::string& name : scalars) sig.input(name, OperandKind::kScalar);
  for (const std::string& name : outputs) {
    const auto s = std::find_if(program.statements.begin(), program.statements.end(),
                                [&](const auto& statement) { return statement.target == name; });
    const OperandKind kind = s != program.statements.end() ? output_kind(*s->value) : OperandKind::kMatrix;
    ElementType type = ElementType::kF32;
    if (kind == OperandKind::kMatrix) {
      if (out_type) {
        type = *out_type;
      } else if (s != program.statements.end() && s->value->kind == Expr::Kind::kCall) {
        // Not a cast (gelu(...)): stays f32.
        evg::frontend::parse_element(s->value->name, type);
      }
    }
    sig.output(name, kind, type);
  }
  return sig;
}

}  // namespace tg::python
