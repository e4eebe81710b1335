// chip_supports (chip_program.h): the core nodes tx8-codegen generates programs for, stated on
// the core graph so that a backend can choose what to compile before importing anything. It
// answers for the same ops and types as codegenSupports (Transforms/Codegen.cpp) does on their
// tx8be counterparts; ChipSupports tests in codegen_test.cpp compile each kind it accepts.
#include <string>

#include "tilegraph/compiler/chip_program.h"
#include "tilegraph/core/dtype.h"
#include "tilegraph/core/ops.h"

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
    if (node.op == Op::MUL_MAT && i == 0 && node.src[0]->type == DType::Q8_0) continue;  // the NE's int8 path
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
      if (node.type != DType::F32) return fail("mul_mat result not f32");
      // q8_0 weights: op_gemm_q8_0 quantizes f32 activations per 32-block on the way in.
      if (w == DType::Q8_0) return x == DType::F32 ? true : fail("mul_mat of q8_0 weights and non-f32 activations");
      if (!isChipFloat(w) || !isChipFloat(x)) return fail("mul_mat of non-float operands");
      // f16/bf16 weights and f32 activations: the activations are rounded to the weights' type
      // on the CGRA first (the NE multiplies operands of one format).
      if (w != x && x != DType::F32) return fail("mul_mat of activations neither f32 nor of the weights' type");
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
    case Op::GET_ROWS:
      if (node.src[0]->type == DType::I32 ? node.type != DType::I32 : node.type != DType::F32) {
        return fail("get_rows' result is neither f32 nor the i32 table's type");
      }
      return true;  // op_embedding_gather straight from the table in DDR
    case Op::SET_ROWS:
      if (!isChipFloat(node.type)) return fail("set_rows into a non-float tensor");
      return true;  // op_wdmaScatter into the tensor in DDR
    case Op::CPY:
      if (!isChipFloat(node.type) || !isChipFloat(node.src[0]->type)) {
        return fail("cpy between non-float types (the CGRA converts f32, f16 and bf16)");
      }
      return true;
    case Op::ROPE:
      if (RopeMode(node.op_params[2]) != RopeMode::NORMAL && RopeMode(node.op_params[2]) != RopeMode::NEOX) {
        return fail("rope mode other than normal or NEOX");
      }
      if (!isChipFloat(node.type) || node.src[0]->type != node.type) return fail("input and result types differ");
      return true;
    case Op::FLASH_ATTN_EXT: {
      const Tensor &k = *node.src[1], &v = *node.src[2];
      if (node.param_f32(1) != 0.0f) return fail("ALiBi (max_bias > 0) is not in op_attention_decode");
      if (node.param_f32(2) != 0.0f) return fail("softcap is not in op_attention_decode");
      if (k.type != v.type) return fail("key and value of different types");
      if (k.ne[0] != v.ne[0]) {
        return fail("value rows of another length than key rows (op_attention_decode takes D == Dv)");
      }
      if (const Tensor* mask = node.src[3]) {
        if (mask->type != DType::F32) return fail("the mask is not f32 (op_attention_decode adds an f32 mask)");
        if (mask->ne[2] != 1) return fail("a mask per head (op_attention_decode adds one row)");
      }
      return true;
    }
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
