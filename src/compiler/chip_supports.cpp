// chip_supports (chip_program.h): the core nodes tx8-codegen generates programs for, stated on
// the core graph so that a backend can choose what to compile before importing anything. It
// answers for the same ops and types as codegenSupports (Transforms/Codegen.cpp) does on their
// tx8be counterparts; ChipSupports tests in codegen_test.cpp compile each kind it accepts.
#include <string>

#include "tilegraph/compiler/chip_program.h"
#include "tilegraph/core/dtype.h"

namespace tg::compiler {

namespace {

bool isChipFloat(DType type) { return type == DType::F32 || type == DType::F16 || type == DType::BF16; }

// One row of `like`'s innermost size (ggml ne[0]) repeated over the rest.
bool isRowOf(const Tensor& row, const Tensor& like) {
  return row.ne[0] == like.ne[0] && row.ne[1] == 1 && row.ne[2] == 1 && row.ne[3] == 1;
}

bool sameShape(const Tensor& a, const Tensor& b) {
  for (int d = 0; d < 4; ++d) {
    if (a.ne[d] != b.ne[d]) return false;
  }
  return true;
}

}  // namespace

bool chip_supports(const Tensor& node, std::string* why) {
  auto fail = [&](const std::string& reason) {
    if (why) *why = reason;
    return false;
  };
  if (node.op == Op::NONE || node.op == Op::CONT) return true;  // leaves; CONT imports as nothing
  for (int i = 0; i < kMaxSrc && node.src[i]; ++i) {
    if (node.op == Op::VIEW || node.op == Op::RESHAPE || node.op == Op::PERMUTE || node.op == Op::TRANSPOSE) break;
    if (is_quantized(node.src[i]->type)) {
      return fail("operand " + std::to_string(i) + " is block-quantized (" +
                  std::string(dtype_name(node.src[i]->type)) + "): the generated programs take f32, f16, bf16 and i32");
    }
  }
  switch (node.op) {
    case Op::VIEW:
    case Op::RESHAPE:
    case Op::PERMUTE:
    case Op::TRANSPOSE:
    case Op::CONCAT:
      if (is_quantized(node.type)) return fail("a move of block-quantized data");
      return true;  // DMA moves in DDR
    case Op::MUL_MAT: {
      const DType w = node.src[0]->type, x = node.src[1]->type;
      if (!isChipFloat(w) || !isChipFloat(x)) return fail("mul_mat of non-float operands");
      if (w != x) return fail("mul_mat of weights and activations of different types");
      if (node.type != DType::F32) return fail("mul_mat result not f32");
      return true;
    }
    case Op::ADD:
    case Op::SUB:
    case Op::MUL:
    case Op::DIV:
      if (!isChipFloat(node.type) || node.src[0]->type != node.type || node.src[1]->type != node.type) {
        return fail("operands of different or non-float types (the CGRA's VV takes one format)");
      }
      if (!sameShape(*node.src[1], *node.src[0]) && !isRowOf(*node.src[1], *node.src[0])) {
        return fail("the rhs repeats other than as one row (the oplib broadcasts one row)");
      }
      return true;
    case Op::UNARY:
      if (UnaryOp(node.op_params[0]) == UnaryOp::GELU_ERF) return fail("gelu_erf: the CGRA has the tanh form only");
      [[fallthrough]];
    case Op::SCALE:
    case Op::NORM:
    case Op::RMS_NORM:
      if (!isChipFloat(node.type) || node.src[0]->type != node.type) return fail("input and result types differ");
      return true;
    case Op::SOFT_MAX:
      if (node.param_f32(1) != 0.0f) return fail("ALiBi (max_bias > 0) is not in the oplib's softmax");
      if (!isChipFloat(node.type) || node.src[0]->type != node.type) return fail("input and result types differ");
      if (node.src[1]) {
        if (node.src[1]->type != DType::F32) return fail("the mask is not f32 (the oplib's softmax adds an f32 mask)");
        if (!sameShape(*node.src[1], *node.src[0]) && !isRowOf(*node.src[1], *node.src[0])) {
          return fail("the mask is neither the input's shape nor one row");
        }
      }
      return true;
    case Op::GLU:
      if (!node.src[1]) return fail("glu without a separate gate");
      if (!isChipFloat(node.type) || node.src[0]->type != node.type || node.src[1]->type != node.type) {
        return fail("operands of different or non-float types");
      }
      return true;
    case Op::CONV_2D:
      if (node.src[0]->type != DType::F32) {
        return fail("conv_2d with a " + std::string(dtype_name(node.src[0]->type)) +
                    " kernel (the NE's convolution takes the f32 input's format)");
      }
      return true;
    case Op::BATCH_NORM:
      // Core axis 2 is NCHW's C, axis 0 the innermost: the two the tile program has.
      if (node.op_params[1] != 2 && node.op_params[1] != 0) {
        return fail("batch_norm over axis " + std::to_string(node.op_params[1]) +
                    " (the generated program takes NCHW's C, axis 2, or the innermost, axis 0)");
      }
      if (node.type != DType::F32) return fail("batch_norm of a non-f32 input");
      return true;
    case Op::POOL_2D: return true;  // f32, max or avg (core's rule)
    default: break;
  }
  return fail(std::string(op_name(node.op)) + ": tx8-codegen has no program for it yet");
}

}  // namespace tg::compiler
