#include "tilegraph/core/tensor.h"

#include <algorithm>
#include <sstream>

#include "tilegraph/core/error.h"

namespace tg {

namespace {

constexpr std::string_view kOpNames[kOpCount] = {
    "none",           "mul_mat",  "add",    "sub",        "mul",      "div",     "scale",
    "unary",          "glu",      "norm",   "rms_norm",   "soft_max", "rope",    "get_rows",
    "set_rows",       "cpy",      "cont",   "view",       "reshape",  "permute", "transpose",
    "flash_attn_ext", "sum_rows", "argmax", "batch_norm", "conv_2d",  "pool_2d", "concat",
};
constexpr std::string_view kUnaryNames[kUnaryOpCount] = {
    "relu", "gelu", "gelu_erf", "silu", "sigmoid", "tanh", "exp", "neg", "abs", "sqrt", "rsqrt",
};
constexpr std::string_view kGluNames[kGluOpCount] = {"swiglu", "geglu"};

}  // namespace

std::string_view op_name(Op op) {
  const int i = int(op);
  return i >= 0 && i < kOpCount ? kOpNames[i] : std::string_view("unknown-op");
}
std::string_view unary_op_name(UnaryOp op) {
  const int i = int(op);
  return i >= 0 && i < kUnaryOpCount ? kUnaryNames[i] : std::string_view("unknown-unary");
}
std::string_view glu_op_name(GluOp op) {
  const int i = int(op);
  return i >= 0 && i < kGluOpCount ? kGluNames[i] : std::string_view("unknown-glu");
}

size_t Tensor::nbytes() const {
  if (is_empty()) return 0;
  const DTypeTraits& traits = dtype_traits(type);
  // The last element's offset plus its size; for block types, whole blocks along ne[0].
  size_t bytes =
      traits.block_size == 1 ? traits.type_size + size_t(ne[0] - 1) * nb[0] : size_t(ne[0]) / traits.block_size * nb[0];
  for (int i = 1; i < kMaxDims; ++i) bytes += size_t(ne[i] - 1) * nb[i];
  return bytes;
}

bool Tensor::is_contiguous() const {
  const DTypeTraits& traits = dtype_traits(type);
  size_t expected = traits.type_size;
  if (nb[0] != expected && ne[0] > 1) return false;
  expected = row_size(type, ne[0]);
  for (int i = 1; i < kMaxDims; ++i) {
    if (ne[i] != 1 && nb[i] != expected) return false;
    expected *= size_t(ne[i]);
  }
  return true;
}

bool Tensor::has_contiguous_rows() const { return ne[0] <= 1 || nb[0] == dtype_traits(type).type_size; }

bool Tensor::is_noop() const {
  return is_empty() || op == Op::NONE || op == Op::VIEW || op == Op::RESHAPE || op == Op::PERMUTE ||
         op == Op::TRANSPOSE;
}

int Tensor::num_src() const {
  int n = 0;
  for (int i = 0; i < kMaxSrc; ++i) {
    if (src[i]) n = i + 1;
  }
  return n;
}

void Tensor::set_name(std::string_view n) {
  const size_t len = std::min(n.size(), size_t(kMaxName - 1));
  std::copy_n(n.data(), len, name);
  name[len] = '\0';
}

std::string shape_string(const Tensor& t) { return shape_string(std::span<const int64_t>(t.ne)); }

std::string shape_string(std::span<const int64_t> ne) {
  std::string text = "[";
  for (size_t i = 0; i < ne.size(); ++i) {
    if (i) text += ',';
    text += std::to_string(ne[i]);
  }
  return text + ']';
}

std::string describe(const Tensor& t) {
  std::ostringstream out;
  if (t.name[0]) out << t.name << ' ';
  out << dtype_name(t.type) << ' ' << shape_string(t) << " nb=[" << t.nb[0] << ',' << t.nb[1] << ',' << t.nb[2] << ','
      << t.nb[3] << ']';
  return out.str();
}

bool same_shape(const Tensor& a, const Tensor& b) { return std::equal(a.ne, a.ne + kMaxDims, b.ne); }

bool can_repeat(const Tensor& b, const Tensor& a) {
  if (b.is_empty()) return a.is_empty();
  for (int i = 0; i < kMaxDims; ++i) {
    if (a.ne[i] % b.ne[i] != 0) return false;
  }
  return true;
}

}  // namespace tg
