#pragma once
// The ggml-like tensor: shape `ne`, byte strides `nb`, the op that produces it with its sources
// and parameters, and (once allocated) its data. Dimension 0 is the innermost (contiguous) one.
#include <array>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>

#include "tilegraph/core/dtype.h"

namespace tg {

inline constexpr int kMaxDims = 4;
inline constexpr int kMaxSrc = 10;
inline constexpr int kMaxOpParams = 16;  // int32 words
inline constexpr int kMaxName = 64;

// Keep in sync with op_name() in tensor.cpp; docs/core.md lists the semantics of each.
enum class Op : int32_t {
  NONE,  // a leaf: weights, inputs, constants
  MUL_MAT,
  ADD,
  SUB,
  MUL,
  DIV,
  SCALE,
  UNARY,
  GLU,
  NORM,
  RMS_NORM,
  SOFT_MAX,
  ROPE,
  GET_ROWS,
  SET_ROWS,
  CPY,
  CONT,
  VIEW,
  RESHAPE,
  PERMUTE,
  TRANSPOSE,
  FLASH_ATTN_EXT,
  SUM_ROWS,
  ARGMAX,
  BATCH_NORM,
  CONV_2D,
  POOL_2D,
  CONCAT,
};
inline constexpr int kOpCount = int(Op::CONCAT) + 1;

enum class UnaryOp : int32_t { RELU, GELU, GELU_ERF, SILU, SIGMOID, TANH, EXP, NEG, ABS, SQRT, RSQRT };
inline constexpr int kUnaryOpCount = int(UnaryOp::RSQRT) + 1;

enum class GluOp : int32_t { SWIGLU, GEGLU };
inline constexpr int kGluOpCount = int(GluOp::GEGLU) + 1;

enum class PoolOp : int32_t { MAX, AVG };

enum class RopeMode : int32_t { NORMAL = 0, NEOX = 2 };

std::string_view op_name(Op op);
std::string_view unary_op_name(UnaryOp op);
std::string_view glu_op_name(GluOp op);

enum TensorFlag : uint32_t {
  kFlagParam = 1u << 0,   // a weight: lives as long as the model
  kFlagInput = 1u << 1,   // written by the caller before each compute
  kFlagOutput = 1u << 2,  // read by the caller after compute: never reused by the allocator
  kFlagPlaced = 1u << 3,  // data placed by a GraphAllocator, which places it again each time
};

// Field order is for graph-mode lookup (runtime/graph_signature.cpp), which reads every graph
// node on each compute: line 0 holds what the lookup key hashes (op, type, ne, data, view_src),
// lines 0-2 everything the exact verification compares; sources and the name come after.
struct alignas(64) Tensor {
  DType type = DType::F32;
  Op op = Op::NONE;
  int64_t ne[kMaxDims] = {1, 1, 1, 1};  // elements per dimension
  void* data = nullptr;
  Tensor* view_src = nullptr;          // the tensor whose memory a view aliases
  size_t view_offs = 0;                // byte offset into view_src's data
  size_t nb[kMaxDims] = {0, 0, 0, 0};  // bytes between consecutive elements (blocks for quantized types)
  int32_t op_params[kMaxOpParams] = {};
  uint32_t flags = 0;
  Tensor* src[kMaxSrc] = {};
  char name[kMaxName] = {};

  int64_t nelements() const { return ne[0] * ne[1] * ne[2] * ne[3]; }
  int64_t nrows() const { return ne[1] * ne[2] * ne[3]; }
  // Bytes spanned from the first to one past the last element (0 when empty).
  size_t nbytes() const;
  size_t row_bytes() const { return row_size(type, ne[0]); }
  bool is_empty() const { return nelements() == 0; }
  // Rows are packed one after another with no gaps and in dimension order.
  bool is_contiguous() const;
  // Elements inside each row are adjacent (nb[0] == element size); rows may be strided.
  bool has_contiguous_rows() const;
  bool is_view() const { return view_src != nullptr; }
  // VIEW, RESHAPE, PERMUTE, TRANSPOSE and empty tensors: nothing to execute.
  bool is_noop() const;

  float param_f32(int i) const {
    float v;
    std::memcpy(&v, &op_params[i], sizeof v);
    return v;
  }
  void set_param_f32(int i, float v) { std::memcpy(&op_params[i], &v, sizeof v); }
  int num_src() const;

  // Element access for reference code and tests (no bounds checks beyond an assert).
  void* element_ptr(int64_t i0, int64_t i1, int64_t i2, int64_t i3) const {
    return static_cast<char*>(data) + i0 * nb[0] + i1 * nb[1] + i2 * nb[2] + i3 * nb[3];
  }
  void set_name(std::string_view n);
};

// "[64,32,1,1]"
std::string shape_string(const Tensor& t);
// "[64,32]": the sizes given, however many (a shape not yet in a tensor, a file's n_dims).
std::string shape_string(std::span<const int64_t> ne);
// "name f32 [64,32,1,1] nb=[4,256,8192,8192]" for error messages and dumps.
std::string describe(const Tensor& t);
bool same_shape(const Tensor& a, const Tensor& b);
// b can be broadcast (repeated) to a's shape: a.ne[i] % b.ne[i] == 0 for all i.
bool can_repeat(const Tensor& b, const Tensor& a);

}  // namespace tg
