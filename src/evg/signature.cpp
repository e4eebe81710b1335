#include "tilegraph/evg/frontend/signature.h"

#include <utility>

namespace tg::evg::frontend {

namespace {

struct ElementName {
  ElementType type;
  std::string_view name;
  std::string_view cpp;
};

constexpr ElementName kElements[] = {
    {ElementType::kF32, "f32", "float"},      {ElementType::kF16, "f16", "tg::f16"},
    {ElementType::kBF16, "bf16", "tg::bf16"}, {ElementType::kI8, "i8", "int8_t"},
    {ElementType::kI32, "i32", "int32_t"},
};

const OperandDecl* find(const std::vector<OperandDecl>& decls, std::string_view name) {
  for (const OperandDecl& d : decls) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

}  // namespace

std::string_view element_name(ElementType type) { return kElements[int(type)].name; }

std::string_view element_cpp(ElementType type) { return kElements[int(type)].cpp; }

bool parse_element(std::string_view name, ElementType& type) {
  for (const ElementName& e : kElements) {
    if (e.name == name) {
      type = e.type;
      return true;
    }
  }
  return false;
}

std::string_view kind_name(OperandKind kind) {
  switch (kind) {
    case OperandKind::kMatrix: return "matrix";
    case OperandKind::kRowVector: return "row vector";
    case OperandKind::kColVector: return "column vector";
    case OperandKind::kScalar: return "scalar";
  }
  return "?";
}

Signature& Signature::input(std::string name, OperandKind kind, ElementType type) {
  inputs.push_back({std::move(name), kind, type});
  return *this;
}

Signature& Signature::output(std::string name, OperandKind kind, ElementType type) {
  outputs.push_back({std::move(name), kind, type});
  return *this;
}

const OperandDecl* Signature::find_input(std::string_view name) const { return find(inputs, name); }

const OperandDecl* Signature::find_output(std::string_view name) const { return find(outputs, name); }

}  // namespace tg::evg::frontend
