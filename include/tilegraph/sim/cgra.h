#pragma once
// The CGRA tensor unit's instructions (engine CT), named as the TX8 toolchain names them:
// CGRATensor_<Function>_<Format>_<Name>.<type>, where the format says what the operands are:
//   VV      vector with vector          VS      vector with a scalar
//   V       one vector                  VuV     vector with a unit vector broadcast over it
//   Tensor  a shaped operand (reductions, pooling, transposes)
// Operands are SPM byte addresses of the issuing tile and element counts. Float formats compute
// in f32 and round the result to the format with `rnd`; int formats compute exactly and
// saturate. Sources and destination may be the same address (in-place); a partial overlap
// behaves as if every source were read before anything is written.
//
// Each instruction is a plain struct; `execute(tile, instruction)` runs it and returns its
// cycles: latency + ceil(elements / elements-per-cycle) x passes (docs/sim.md, "CGRA").
#include <cstdint>
#include <string>

#include "tilegraph/sim/chip.h"
#include "tilegraph/sim/format.h"
#include "tilegraph/sim/memory.h"

namespace tg::sim::cgra {

enum class ArithOp : int32_t { Add, Sub, Mul, Div, Max, Min };
// Unary functions: ArithOp (abs, neg), ActOp (relu, gelu, silu, sigmoid, tanh), TransOp (exp,
// log, sqrt, rsqrt, recip). gelu is the tanh approximation, as the core reference's GELU.
enum class UnaryOp : int32_t { Abs, Neg, Relu, Gelu, Silu, Sigmoid, Tanh, Exp, Log, Sqrt, Rsqrt, Recip };
// Results are 1 or 0 in the instruction's format.
enum class CompareOp : int32_t { Eq, Ne, Lt, Le, Gt, Ge };
// Logical: operands are true when non-zero; results are 1 or 0. Not ignores the second operand.
enum class LogicOp : int32_t { And, Or, Xor, Not };
// Bitwise on int8/int32 (Shl/Shr: arithmetic shifts by the second operand).
enum class BitOp : int32_t { And, Or, Xor, Not, Shl, Shr };
enum class ReduceOp : int32_t { Sum, Mean, Max, Min };
enum class PoolOp : int32_t { Max, Avg };

std::string_view arith_op_name(ArithOp op);  // "add", ...
std::string_view unary_op_name(UnaryOp op);  // "relu", ...

// dst[i] = src0[i] op src1[i]
struct ArithVV {
  ArithOp op = ArithOp::Add;
  Format format = Format::FP32;
  uint64_t src0 = 0, src1 = 0, dst = 0;
  int64_t n = 0;
  RoundMode rnd = RoundMode::NearestEven;
};
// dst[i] = src[i] op scalar (scalar op src[i] when scalar_first: rsub, rdiv)
struct ArithVS {
  ArithOp op = ArithOp::Add;
  Format format = Format::FP32;
  uint64_t src = 0;
  double scalar = 0;
  uint64_t dst = 0;
  int64_t n = 0;
  RoundMode rnd = RoundMode::NearestEven;
  bool scalar_first = false;
};
// VuV: dst[i] = src[i] op unit[i % unit_elem_num], i < src_elem_num (a multiple of
// unit_elem_num): a unit vector (one value per channel) broadcast over an NHWC block.
struct ArithVuV {
  ArithOp op = ArithOp::Mul;
  Format format = Format::FP32;
  uint64_t src = 0, unit = 0, dst = 0;
  int64_t src_elem_num = 0, unit_elem_num = 0;
  RoundMode rnd = RoundMode::NearestEven;
};
// VuV_<op>_loop: the VuV repeated over consecutive blocks, block j being src + j*src_elem_num
// with unit + j*unit_elem_num: one call covers the Cx part of an NCx batch ([Cx][HW][64] against
// the channel vector). unit_elem_num must be 64 (128 for int8) and full_src_elem_num /
// full_unit_elem_num == src_elem_num / unit_elem_num (both whole).
struct ArithVuVLoop {
  ArithOp op = ArithOp::Mul;
  Format format = Format::FP32;
  uint64_t src = 0, unit = 0, dst = 0;
  int64_t src_elem_num = 0, unit_elem_num = 0;
  int64_t full_src_elem_num = 0, full_unit_elem_num = 0;
  RoundMode rnd = RoundMode::NearestEven;
};
// dst[i] = f(src[i]); float formats only (abs, neg, relu also int8/int32).
struct UnaryV {
  UnaryOp op = UnaryOp::Relu;
  Format format = Format::FP32;
  uint64_t src = 0, dst = 0;
  int64_t n = 0;
  RoundMode rnd = RoundMode::NearestEven;
};
struct CompareVV {
  CompareOp op = CompareOp::Eq;
  Format format = Format::FP32;
  uint64_t src0 = 0, src1 = 0, dst = 0;
  int64_t n = 0;
};
struct CompareVS {
  CompareOp op = CompareOp::Eq;
  Format format = Format::FP32;
  uint64_t src = 0;
  double scalar = 0;
  uint64_t dst = 0;
  int64_t n = 0;
};
struct LogicVV {
  LogicOp op = LogicOp::And;
  Format format = Format::FP32;
  uint64_t src0 = 0, src1 = 0, dst = 0;  // src1 unused by Not
  int64_t n = 0;
};
struct BitVV {
  BitOp op = BitOp::And;
  Format format = Format::INT32;
  uint64_t src0 = 0, src1 = 0, dst = 0;  // src1 unused by Not
  int64_t n = 0;
};
struct BitVS {
  BitOp op = BitOp::And;
  Format format = Format::INT32;
  uint64_t src = 0;
  int64_t scalar = 0;
  uint64_t dst = 0;
  int64_t n = 0;
};
// Reduces the middle axis of [outer][extent][inner] to [outer][inner], summing in f32 (int32
// for int formats). inner = 1 reduces rows (softmax, norms); outer = 1 reduces over H*W per
// channel of an NHWC block.
struct ReduceTensor {
  ReduceOp op = ReduceOp::Sum;
  Format format = Format::FP32;
  uint64_t src = 0, dst = 0;
  int64_t outer = 1, extent = 0, inner = 1;
  RoundMode rnd = RoundMode::NearestEven;
};
// 2-D pooling over dense NHWC [n][h][w][c] -> [n][oh][ow][c], oh = (h + 2 pad_h - kh) / stride_h + 1.
// Max ignores padding; Avg divides by kh*kw (padding counts as zeros).
struct PoolTensor {
  PoolOp op = PoolOp::Max;
  Format format = Format::FP32;
  uint64_t src = 0, dst = 0;
  int64_t n = 1, h = 1, w = 1, c = 1;
  int32_t kh = 2, kw = 2, stride_h = 2, stride_w = 2, pad_h = 0, pad_w = 0;
  RoundMode rnd = RoundMode::NearestEven;
};
// Data movement: copy, fill, 2-D transpose ([rows][cols] -> [cols][rows]).
struct MoveV {
  Format format = Format::FP32;
  uint64_t src = 0, dst = 0;
  int64_t n = 0;
};
struct FillV {
  Format format = Format::FP32;
  uint64_t dst = 0;
  double value = 0;
  int64_t n = 0;
};
struct TransposeTensor {
  Format format = Format::FP32;
  uint64_t src = 0, dst = 0;
  int64_t rows = 0, cols = 0;
};
// Format conversion, e.g. CGRATensor_ConvertOp_V_fp16_fp32. src and dst may overlap as in the
// widening recipe (lsu.h, GatherScatter): the narrow source in the upper half of the wide
// destination.
struct ConvertV {
  Format from = Format::FP16, to = Format::FP32;
  uint64_t src = 0, dst = 0;
  int64_t n = 0;
  RoundMode rnd = RoundMode::NearestEven;
};

uint64_t execute(Tile& tile, const ArithVV& instr);
uint64_t execute(Tile& tile, const ArithVS& instr);
uint64_t execute(Tile& tile, const ArithVuV& instr);
uint64_t execute(Tile& tile, const ArithVuVLoop& instr);
uint64_t execute(Tile& tile, const UnaryV& instr);
uint64_t execute(Tile& tile, const CompareVV& instr);
uint64_t execute(Tile& tile, const CompareVS& instr);
uint64_t execute(Tile& tile, const LogicVV& instr);
uint64_t execute(Tile& tile, const BitVV& instr);
uint64_t execute(Tile& tile, const BitVS& instr);
uint64_t execute(Tile& tile, const ReduceTensor& instr);
uint64_t execute(Tile& tile, const PoolTensor& instr);
uint64_t execute(Tile& tile, const MoveV& instr);
uint64_t execute(Tile& tile, const FillV& instr);
uint64_t execute(Tile& tile, const TransposeTensor& instr);
uint64_t execute(Tile& tile, const ConvertV& instr);

// The instruction's name as errors and traces show it, e.g. "CGRATensor_ArithOp_VuV_mul_loop.fp32".
std::string instruction_name(const ArithVV& instr);
std::string instruction_name(const ArithVS& instr);
std::string instruction_name(const ArithVuV& instr);
std::string instruction_name(const ArithVuVLoop& instr);
std::string instruction_name(const UnaryV& instr);
std::string instruction_name(const CompareVV& instr);
std::string instruction_name(const CompareVS& instr);
std::string instruction_name(const LogicVV& instr);
std::string instruction_name(const BitVV& instr);
std::string instruction_name(const BitVS& instr);
std::string instruction_name(const ReduceTensor& instr);
std::string instruction_name(const PoolTensor& instr);
std::string instruction_name(const MoveV& instr);
std::string instruction_name(const FillV& instr);
std::string instruction_name(const TransposeTensor& instr);
std::string instruction_name(const ConvertV& instr);

}  // namespace tg::sim::cgra
