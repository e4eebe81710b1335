#include "tilegraph/core/node_rules.h"

#include <initializer_list>
#include <string>
#include <utility>

#include "tilegraph/core/dtype.h"

namespace tg {

namespace {

// A hand-built node may carry a dtype outside the enum, for which dtype_traits throws: is_float
// compares plainly, is_block_type checks the range first.
bool is_float(DType type) { return type == DType::F32 || type == DType::F16 || type == DType::BF16; }
bool is_block_type(DType type) { return int(type) >= 0 && int(type) < kDTypeCount && is_quantized(type); }

// What is wrong with `node`, or nothing.
std::string violation(const Tensor& node) {
  const Tensor* const* src = node.src;
  auto need = [&](std::initializer_list<int> indices) -> std::string {
    for (int i : indices) {
      if (!src[i]) return "src[" + std::to_string(i) + "] is missing";
    }
    return "";
  };
  auto type_of = [&](int i) { return std::string(dtype_name(src[i]->type)); };
  const std::string node_type(dtype_name(node.type));

  switch (node.op) {
    case Op::NONE:
    case Op::VIEW:
    case Op::RESHAPE:
    case Op::PERMUTE:
    case Op::TRANSPOSE: return "";
    case Op::MUL_MAT:
      if (auto m = need({0, 1}); !m.empty()) return m;
      if (!is_float(src[0]->type) && !is_block_type(src[0]->type)) return "a is " + type_of(0);
      if (!is_float(src[1]->type)) return "b is " + type_of(1);
      return node.type == DType::F32 ? "" : "result is " + node_type;
    case Op::ADD:
    case Op::SUB:
    case Op::MUL:
    case Op::DIV:
      if (auto m = need({0, 1}); !m.empty()) return m;
      if (!is_float(src[0]->type) || !is_float(src[1]->type) || !is_float(node.type)) {
        return "operands are " + type_of(0) + " and " + type_of(1) + ", result " + node_type;
      }
      return "";
    case Op::SCALE:
    case Op::NORM:
    case Op::RMS_NORM:
    case Op::UNARY:
      if (auto m = need({0}); !m.empty()) return m;
      if (!is_float(src[0]->type) || !is_float(node.type)) return "a is " + type_of(0);
      if (node.op == Op::UNARY && (node.op_params[0] < 0 || node.op_params[0] >= kUnaryOpCount)) {
        return "unknown unary op " + std::to_string(node.op_params[0]);
      }
      return "";
    case Op::GLU:
      if (auto m = need({0}); !m.empty()) return m;
      if (!is_float(src[0]->type) || (src[1] && !is_float(src[1]->type)) || !is_float(node.type)) {
        return "operands must be f32, f16 or bf16";
      }
      if (node.op_params[0] < 0 || node.op_params[0] >= kGluOpCount) {
        return "unknown glu op " + std::to_string(node.op_params[0]);
      }
      return "";
    case Op::SOFT_MAX:
      if (auto m = need({0}); !m.empty()) return m;
      if (!is_float(src[0]->type) || !is_float(node.type)) return "a is " + type_of(0);
      if (src[1] && src[1]->type != DType::F32 && src[1]->type != DType::F16) return "mask is " + type_of(1);
      return "";
    case Op::ROPE:
      if (auto m = need({0, 1}); !m.empty()) return m;
      if (src[0]->type != DType::F32 && src[0]->type != DType::F16) return "a is " + type_of(0);
      if (src[1]->type != DType::I32) return "pos is " + type_of(1);
      if (src[2] && src[2]->type != DType::F32) return "freq_factors is " + type_of(2);
      return node.type == src[0]->type ? "" : "result is " + node_type;
    case Op::GET_ROWS: {
      if (auto m = need({0, 1}); !m.empty()) return m;
      if (src[1]->type != DType::I32) return "idx is " + type_of(1);
      const DType expected = src[0]->type == DType::I32 ? DType::I32 : DType::F32;
      return node.type == expected ? "" : "result is " + node_type;
    }
    case Op::SET_ROWS:
      if (auto m = need({1, 2}); !m.empty()) return m;
      if (!is_float(node.type) && !is_block_type(node.type)) return "dst is " + node_type;
      if (src[1]->type != DType::F32) return "src is " + type_of(1);
      return src[2]->type == DType::I32 ? "" : "idx is " + type_of(2);
    case Op::CPY:
    case Op::CONT: {
      if (auto m = need({0}); !m.empty()) return m;
      const bool ints = src[0]->type == DType::I32 && node.type == DType::I32;
      const bool numeric = src[0]->type != DType::I32 && node.type != DType::I32;
      if (!ints && !numeric) return "i32 copies only to i32 (" + type_of(0) + " -> " + node_type + ")";
      return src[0]->nelements() == node.nelements() ? "" : "element counts differ";
    }
    case Op::FLASH_ATTN_EXT:
      if (auto m = need({0, 1, 2}); !m.empty()) return m;
      if (src[0]->type != DType::F32) return "q is " + type_of(0);
      if (!is_float(src[1]->type) || !is_float(src[2]->type)) return "k/v are " + type_of(1) + "/" + type_of(2);
      if (src[3] && src[3]->type != DType::F32 && src[3]->type != DType::F16) return "mask is " + type_of(3);
      return node.type == DType::F32 ? "" : "result is " + node_type;
    case Op::SUM_ROWS:
    case Op::ARGMAX:
      if (auto m = need({0}); !m.empty()) return m;
      return src[0]->type == DType::F32 ? "" : "a is " + type_of(0);
    case Op::BATCH_NORM:
      if (auto m = need({0, 1, 2}); !m.empty()) return m;
      for (int i = 0; i < 5; ++i) {
        if (src[i] && src[i]->type != DType::F32) return "src[" + std::to_string(i) + "] is " + type_of(i);
      }
      return "";
    case Op::CONV_2D:
      if (auto m = need({0, 1}); !m.empty()) return m;
      if (src[0]->type != DType::F32 && src[0]->type != DType::F16) return "kernel is " + type_of(0);
      return src[1]->type == DType::F32 ? "" : "input is " + type_of(1);
    case Op::POOL_2D:
      if (auto m = need({0}); !m.empty()) return m;
      return src[0]->type == DType::F32 ? "" : "a is " + type_of(0);
    case Op::CONCAT:
      if (auto m = need({0, 1}); !m.empty()) return m;
      if (src[0]->type != src[1]->type || src[0]->type != node.type) return "types differ";
      return is_block_type(node.type) ? node_type + " is not supported" : "";
  }
  return "unknown op " + std::to_string(int(node.op));
}

}  // namespace

bool follows_node_rules(const Tensor& node, std::string* why) {
  std::string reason = violation(node);
  if (reason.empty()) return true;
  if (why) *why = std::move(reason);
  return false;
}

}  // namespace tg
