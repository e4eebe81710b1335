#pragma once
// The parsed form of a string epilogue, before any name is resolved.
//
//   program    := statement ((';' | newline) statement)*      '#' starts a comment
//   statement  := name '=' expr
//   expr       := term (('+' | '-') term)*
//   term       := unary (('*' | '/') unary)*
//   unary      := '-' unary | primary
//   primary    := number | name | name '[' ('row' | 'col') ']' | name '(' expr (',' expr)* ')'
//               | '(' expr ')'
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tilegraph/evg/frontend/error.h"

namespace tg::evg::frontend {

struct Expr {
  enum class Kind { kNumber, kName, kIndex, kCall, kNegate, kBinary };
  Kind kind = Kind::kNumber;
  SourcePosition position;
  std::string name;                         // kName, kIndex (the vector), kCall (the function)
  std::string index;                        // kIndex: "row" or "col"
  float number = 0;                         // kNumber, rounded to nearest f32
  char op = 0;                              // kBinary: + - * /
  std::vector<std::unique_ptr<Expr>> args;  // kCall arguments, kNegate's operand, kBinary's two
};

struct Statement {
  std::string target;
  SourcePosition position;  // of the target
  std::unique_ptr<Expr> value;
};

struct Program {
  std::vector<Statement> statements;
};

// Throws FrontEndError for syntax errors (unexpected token, missing ')' or '=', bad number,
// bad index, empty program).
Program parse_program(std::string_view source);

}  // namespace tg::evg::frontend
