#pragma once
// What a string epilogue may name besides `acc`: its inputs and outputs, with their kinds and
// element types. Every name a statement uses must be declared here or assigned by a statement.
#include <string>
#include <string_view>
#include <vector>

namespace tg::evg::frontend {

// The element types of EVG edges (numeric/element.h): f32, f16, bf16, i8, i32.
enum class ElementType { kF32, kF16, kBF16, kI8, kI32 };

std::string_view element_name(ElementType type);  // "f32", ...
std::string_view element_cpp(ElementType type);   // "float", "tg::f16", ...
// nullptr-free lookup: false if `name` is not one of the five.
bool parse_element(std::string_view name, ElementType& type);

enum class OperandKind {
  kMatrix,     // M x N, any strides: `C`
  kRowVector,  // N values indexed by column: `bias[col]`; as an output, a row_* reduction
  kColVector,  // M values indexed by row: `scale[row]`; as an output, a col_* reduction
  kScalar,     // one f32 value: `alpha` (inputs only)
};

std::string_view kind_name(OperandKind kind);  // "matrix", "row vector", ...

struct OperandDecl {
  std::string name;
  OperandKind kind = OperandKind::kMatrix;
  ElementType type = ElementType::kF32;
};

struct Signature {
  std::vector<OperandDecl> inputs;
  std::vector<OperandDecl> outputs;

  // Builders: sig.input("C").input("bias", OperandKind::kRowVector).output("D", ...).
  Signature& input(std::string name, OperandKind kind = OperandKind::kMatrix, ElementType type = ElementType::kF32);
  Signature& output(std::string name, OperandKind kind = OperandKind::kMatrix, ElementType type = ElementType::kF32);
  // nullptr if not declared.
  const OperandDecl* find_input(std::string_view name) const;
  const OperandDecl* find_output(std::string_view name) const;
};

}  // namespace tg::evg::frontend
