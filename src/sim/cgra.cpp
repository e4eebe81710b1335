#include "tilegraph/sim/cgra.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "host_kernels.h"
#include "instruction_util.h"
#include "tilegraph/core/error.h"

namespace tg::sim::cgra {

namespace {

using detail::check_count;
using detail::check_format;
using detail::fail;

constexpr std::initializer_list<Format> kFloat = {Format::FP32, Format::FP16, Format::BF16, Format::TF32};
constexpr std::initializer_list<Format> kAll = {Format::FP32, Format::FP16, Format::BF16,
                                                Format::TF32, Format::INT8, Format::INT32};
constexpr std::initializer_list<Format> kInt = {Format::INT8, Format::INT32};

std::string suffix(Format f) {
  std::string s(".");
  s += format_name(f);
  return s;
}

// Elements of `format` the unit reads in a cycle: 2048 bits' worth at the default 64 lanes.
uint64_t elements_per_cycle(const ChipConfig& c, Format format) {
  return uint64_t(c.cgra.lanes) * 4 / format_bytes(format);
}

// latency + ceil(elements / elements-per-cycle) x passes, on the tile's CT.
uint64_t issue_ct(Tile& tile, std::string name, int64_t elements, Format format, int passes) {
  const ChipConfig& c = tile.config();
  Work work;
  work.latency = uint64_t(c.cgra.latency_cycles) +
                 detail::ceil_div(uint64_t(elements), elements_per_cycle(c, format)) * uint64_t(passes);
  return detail::issue(tile, Engine::CT, std::move(name), std::move(work));
}

int arith_passes(const ChipConfig& c, ArithOp op) { return op == ArithOp::Div ? c.cgra.transcendental_cycles : 1; }

int64_t arith_int(const Tile& tile, const std::string& name, ArithOp op, int64_t a, int64_t b) {
  switch (op) {
    case ArithOp::Add: return a + b;
    case ArithOp::Sub: return a - b;
    case ArithOp::Mul: return a * b;
    case ArithOp::Div:
      if (b == 0) fail(tile, name, "integer division by zero");
      return a / b;
    case ArithOp::Max: return std::max(a, b);
    case ArithOp::Min: return std::min(a, b);
  }
  return 0;
}

// dst[i] = src[i] op other(i) over n elements, f32 through the host kernels or exactly for ints.
// `unit` is the second operand, read with period `period` (n for VV, the unit length for VuV).
void arith_vector(Tile& tile, const std::string& name, ArithOp op, Format format, uint64_t src, uint64_t other,
                  uint64_t dst, int64_t n, int64_t period, RoundMode rnd) {
  if (is_float_format(format)) {
    const std::vector<float> a = detail::load_f32(tile, name, src, n, format);
    const std::vector<float> b = detail::load_f32(tile, name, other, period, format);
    std::vector<float> out(static_cast<size_t>(n));
    const HostKernels& k = host_kernels();
    for (int64_t i = 0; i < n; i += period)
      k.binary(op, a.data() + i, b.data(), out.data() + i, std::min(period, n - i));
    detail::store_f32(tile, name, dst, out.data(), n, format, rnd);
    return;
  }
  const std::vector<int64_t> a = detail::load_int(tile, name, src, n, format);
  const std::vector<int64_t> b = detail::load_int(tile, name, other, period, format);
  std::vector<int64_t> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) out[size_t(i)] = arith_int(tile, name, op, a[size_t(i)], b[size_t(i % period)]);
  detail::store_int(tile, name, dst, out.data(), n, format);
}

template <class T>
bool compare(CompareOp op, T a, T b) {
  switch (op) {
    case CompareOp::Eq: return a == b;
    case CompareOp::Ne: return a != b;
    case CompareOp::Lt: return a < b;
    case CompareOp::Le: return a <= b;
    case CompareOp::Gt: return a > b;
    case CompareOp::Ge: return a >= b;
  }
  return false;
}

constexpr std::string_view kCompareNames[] = {"eq", "ne", "lt", "le", "gt", "ge"};
constexpr std::string_view kLogicNames[] = {"and", "or", "xor", "not"};
constexpr std::string_view kBitNames[] = {"and", "or", "xor", "not", "shl", "shr"};
constexpr std::string_view kReduceNames[] = {"sum", "mean", "max", "min"};
constexpr std::string_view kPoolNames[] = {"max", "avg"};

template <size_t N>
std::string_view name_of(const std::string_view (&names)[N], int32_t i) {
  if (i < 0 || size_t(i) >= N) throw Error("cgra: unknown operation " + std::to_string(i));
  return names[size_t(i)];
}

// Writes 0/1 results in `format`.
void store_flags(Tile& tile, const std::string& name, uint64_t dst, const std::vector<char>& flags, Format format) {
  const int64_t n = int64_t(flags.size());
  if (is_float_format(format)) {
    std::vector<float> out(flags.size());
    for (size_t i = 0; i < flags.size(); ++i) out[i] = flags[i] ? 1.0f : 0.0f;
    detail::store_f32(tile, name, dst, out.data(), n, format, RoundMode::NearestEven);
  } else {
    std::vector<int64_t> out(flags.size());
    for (size_t i = 0; i < flags.size(); ++i) out[i] = flags[i] ? 1 : 0;
    detail::store_int(tile, name, dst, out.data(), n, format);
  }
}

// Operands as booleans (non-zero) or compared values: f32 for float formats, exact for ints.
struct Values {
  std::vector<float> f;
  std::vector<int64_t> i;
};
Values load_values(Tile& tile, const std::string& name, uint64_t addr, int64_t n, Format format) {
  Values v;
  if (is_float_format(format)) {
    v.f = detail::load_f32(tile, name, addr, n, format);
  } else {
    v.i = detail::load_int(tile, name, addr, n, format);
  }
  return v;
}

}  // namespace

std::string_view arith_op_name(ArithOp op) {
  static constexpr std::string_view kNames[] = {"add", "sub", "mul", "div", "max", "min"};
  return name_of(kNames, int32_t(op));
}

std::string_view unary_op_name(UnaryOp op) {
  static constexpr std::string_view kNames[] = {"abs",  "neg", "relu", "gelu", "silu",  "sigmoid",
                                                "tanh", "exp", "log",  "sqrt", "rsqrt", "recip"};
  return name_of(kNames, int32_t(op));
}

// ---- names ----

std::string instruction_name(const ArithVV& in) {
  return "CGRATensor_ArithOp_VV_" + std::string(arith_op_name(in.op)) + suffix(in.format);
}
std::string instruction_name(const ArithVS& in) {
  return "CGRATensor_ArithOp_VS_" + std::string(in.scalar_first ? "r" : "") + std::string(arith_op_name(in.op)) +
         suffix(in.format);
}
std::string instruction_name(const ArithVuV& in) {
  return "CGRATensor_ArithOp_VuV_" + std::string(arith_op_name(in.op)) + suffix(in.format);
}
std::string instruction_name(const ArithVuVLoop& in) {
  return "CGRATensor_ArithOp_VuV_" + std::string(arith_op_name(in.op)) + "_loop" + suffix(in.format);
}
std::string instruction_name(const UnaryV& in) {
  const char* function = in.op <= UnaryOp::Neg ? "ArithOp" : in.op <= UnaryOp::Tanh ? "ActOp" : "TransOp";
  return "CGRATensor_" + std::string(function) + "_V_" + std::string(unary_op_name(in.op)) + suffix(in.format);
}
std::string instruction_name(const CompareVV& in) {
  return "CGRATensor_RelOp_VV_" + std::string(name_of(kCompareNames, int32_t(in.op))) + suffix(in.format);
}
std::string instruction_name(const CompareVS& in) {
  return "CGRATensor_RelOp_VS_" + std::string(name_of(kCompareNames, int32_t(in.op))) + suffix(in.format);
}
std::string instruction_name(const LogicVV& in) {
  return "CGRATensor_LogicOp_VV_" + std::string(name_of(kLogicNames, int32_t(in.op))) + suffix(in.format);
}
std::string instruction_name(const BitVV& in) {
  return "CGRATensor_BitOp_VV_" + std::string(name_of(kBitNames, int32_t(in.op))) + suffix(in.format);
}
std::string instruction_name(const BitVS& in) {
  return "CGRATensor_BitOp_VS_" + std::string(name_of(kBitNames, int32_t(in.op))) + suffix(in.format);
}
std::string instruction_name(const ReduceTensor& in) {
  return "CGRATensor_ReduceOp_Tensor_" + std::string(name_of(kReduceNames, int32_t(in.op))) + suffix(in.format);
}
std::string instruction_name(const PoolTensor& in) {
  return "CGRATensor_PoolOp_Tensor_" + std::string(name_of(kPoolNames, int32_t(in.op))) + suffix(in.format);
}
std::string instruction_name(const MoveV& in) { return "CGRATensor_MoveOp_V_copy" + suffix(in.format); }
std::string instruction_name(const FillV& in) { return "CGRATensor_MoveOp_V_fill" + suffix(in.format); }
std::string instruction_name(const TransposeTensor& in) {
  return "CGRATensor_MoveOp_Tensor_transpose" + suffix(in.format);
}
std::string instruction_name(const ConvertV& in) {
  return "CGRATensor_ConvertOp_V_" + std::string(format_name(in.from)) + "_" + std::string(format_name(in.to));
}

// ---- arithmetic ----

uint64_t execute(Tile& tile, const ArithVV& in) {
  const std::string name = detail::begin(tile, instruction_name(in));
  check_format(tile, name, in.format, kAll);
  check_count(tile, name, "n", in.n);
  arith_vector(tile, name, in.op, in.format, in.src0, in.src1, in.dst, in.n, std::max<int64_t>(in.n, 1), in.rnd);
  return issue_ct(tile, name, in.n, in.format, arith_passes(tile.config(), in.op));
}

uint64_t execute(Tile& tile, const ArithVS& in) {
  const std::string name = detail::begin(tile, instruction_name(in));
  check_format(tile, name, in.format, kAll);
  check_count(tile, name, "n", in.n);
  if (is_float_format(in.format)) {
    const std::vector<float> a = detail::load_f32(tile, name, in.src, in.n, in.format);
    std::vector<float> out(static_cast<size_t>(in.n));
    host_kernels().binary_scalar(in.op, a.data(), float(in.scalar), in.scalar_first, out.data(), in.n);
    detail::store_f32(tile, name, in.dst, out.data(), in.n, in.format, in.rnd);
  } else {
    if (in.scalar != std::trunc(in.scalar))
      fail(tile, name, "the scalar " + std::to_string(in.scalar) + " is not an integer");
    const int64_t s = int64_t(in.scalar);
    std::vector<int64_t> v = detail::load_int(tile, name, in.src, in.n, in.format);
    for (int64_t& x : v) x = in.scalar_first ? arith_int(tile, name, in.op, s, x) : arith_int(tile, name, in.op, x, s);
    detail::store_int(tile, name, in.dst, v.data(), in.n, in.format);
  }
  return issue_ct(tile, name, in.n, in.format, arith_passes(tile.config(), in.op));
}

uint64_t execute(Tile& tile, const ArithVuV& in) {
  const std::string name = detail::begin(tile, instruction_name(in));
  check_format(tile, name, in.format, kAll);
  check_count(tile, name, "src_elem_num", in.src_elem_num);
  if (in.unit_elem_num <= 0)
    fail(tile, name, "unit_elem_num = " + std::to_string(in.unit_elem_num) + " must be positive");
  if (in.src_elem_num % in.unit_elem_num != 0) {
    fail(tile, name,
         "src_elem_num " + std::to_string(in.src_elem_num) + " is not a multiple of unit_elem_num " +
             std::to_string(in.unit_elem_num));
  }
  arith_vector(tile, name, in.op, in.format, in.src, in.unit, in.dst, in.src_elem_num, in.unit_elem_num, in.rnd);
  return issue_ct(tile, name, in.src_elem_num, in.format, arith_passes(tile.config(), in.op));
}

uint64_t execute(Tile& tile, const ArithVuVLoop& in) {
  const std::string name = detail::begin(tile, instruction_name(in));
  check_format(tile, name, in.format, kAll);
  const int64_t block = in.format == Format::INT8 ? 128 : 64;
  if (in.unit_elem_num != block) {
    fail(tile, name,
         "unit_elem_num = " + std::to_string(in.unit_elem_num) + " (the loop form needs " + std::to_string(block) +
             ", one channel block)");
  }
  if (in.src_elem_num <= 0 || in.src_elem_num % in.unit_elem_num != 0) {
    fail(tile, name,
         "src_elem_num " + std::to_string(in.src_elem_num) + " is not a positive multiple of unit_elem_num " +
             std::to_string(in.unit_elem_num));
  }
  check_count(tile, name, "full_src_elem_num", in.full_src_elem_num);
  check_count(tile, name, "full_unit_elem_num", in.full_unit_elem_num);
  if (in.full_src_elem_num % in.src_elem_num != 0 ||
      in.full_src_elem_num * in.unit_elem_num != in.full_unit_elem_num * in.src_elem_num) {
    fail(tile, name,
         "full_src_elem_num / full_unit_elem_num = " + std::to_string(in.full_src_elem_num) + " / " +
             std::to_string(in.full_unit_elem_num) +
             " differs from src_elem_num / unit_elem_num = " + std::to_string(in.src_elem_num) + " / " +
             std::to_string(in.unit_elem_num) + " (or is not a whole number of blocks)");
  }
  const int64_t loops = in.full_src_elem_num / in.src_elem_num;
  const uint64_t eb = format_bytes(in.format);
  for (int64_t j = 0; j < loops; ++j) {
    arith_vector(tile, name, in.op, in.format, in.src + uint64_t(j * in.src_elem_num) * eb,
                 in.unit + uint64_t(j * in.unit_elem_num) * eb, in.dst + uint64_t(j * in.src_elem_num) * eb,
                 in.src_elem_num, in.unit_elem_num, in.rnd);
  }
  return issue_ct(tile, name, in.full_src_elem_num, in.format, arith_passes(tile.config(), in.op));
}

// ---- unary ----

uint64_t execute(Tile& tile, const UnaryV& in) {
  const std::string name = detail::begin(tile, instruction_name(in));
  unary_op_name(in.op);
  check_count(tile, name, "n", in.n);
  const bool int_ok = in.op == UnaryOp::Abs || in.op == UnaryOp::Neg || in.op == UnaryOp::Relu;
  check_format(tile, name, in.format, int_ok ? kAll : kFloat);
  if (is_float_format(in.format)) {
    const std::vector<float> x = detail::load_f32(tile, name, in.src, in.n, in.format);
    std::vector<float> out(static_cast<size_t>(in.n));
    host_kernels().unary(in.op, x.data(), out.data(), in.n);
    detail::store_f32(tile, name, in.dst, out.data(), in.n, in.format, in.rnd);
  } else {
    std::vector<int64_t> v = detail::load_int(tile, name, in.src, in.n, in.format);
    for (int64_t& x : v) x = in.op == UnaryOp::Abs ? std::abs(x) : in.op == UnaryOp::Neg ? -x : std::max<int64_t>(x, 0);
    detail::store_int(tile, name, in.dst, v.data(), in.n, in.format);
  }
  const bool simple = int_ok;
  return issue_ct(tile, name, in.n, in.format, simple ? 1 : tile.config().cgra.transcendental_cycles);
}

// ---- relational, logical, bit ----

namespace {

template <class Scalar>
uint64_t compare_impl(Tile& tile, const std::string& name, CompareOp op, Format format, uint64_t src0,
                      const Scalar* scalar, uint64_t src1, uint64_t dst, int64_t n) {
  name_of(kCompareNames, int32_t(op));
  check_format(tile, name, format, kAll);
  check_count(tile, name, "n", n);
  const Values a = load_values(tile, name, src0, n, format);
  Values b;
  if (!scalar) b = load_values(tile, name, src1, n, format);
  std::vector<char> flags(static_cast<size_t>(n));
  if (is_float_format(format)) {
    const float s = scalar ? round_to(format, float(*scalar)) : 0.0f;
    for (int64_t i = 0; i < n; ++i) flags[size_t(i)] = compare(op, a.f[size_t(i)], scalar ? s : b.f[size_t(i)]);
  } else {
    const int64_t s = scalar ? int64_t(*scalar) : 0;
    for (int64_t i = 0; i < n; ++i) flags[size_t(i)] = compare(op, a.i[size_t(i)], scalar ? s : b.i[size_t(i)]);
  }
  store_flags(tile, name, dst, flags, format);
  return issue_ct(tile, name, n, format, 1);
}

}  // namespace

uint64_t execute(Tile& tile, const CompareVV& in) {
  return compare_impl<double>(tile, detail::begin(tile, instruction_name(in)), in.op, in.format, in.src0, nullptr,
                              in.src1, in.dst, in.n);
}

uint64_t execute(Tile& tile, const CompareVS& in) {
  return compare_impl(tile, detail::begin(tile, instruction_name(in)), in.op, in.format, in.src, &in.scalar, 0, in.dst,
                      in.n);
}

uint64_t execute(Tile& tile, const LogicVV& in) {
  const std::string name = detail::begin(tile, instruction_name(in));
  check_format(tile, name, in.format, kAll);
  check_count(tile, name, "n", in.n);
  const Values a = load_values(tile, name, in.src0, in.n, in.format);
  Values b;
  if (in.op != LogicOp::Not) b = load_values(tile, name, in.src1, in.n, in.format);
  const bool fl = is_float_format(in.format);
  std::vector<char> flags(static_cast<size_t>(in.n));
  for (size_t i = 0; i < flags.size(); ++i) {
    const bool x = fl ? a.f[i] != 0.0f : a.i[i] != 0;
    const bool y = in.op == LogicOp::Not ? false : fl ? b.f[i] != 0.0f : b.i[i] != 0;
    switch (in.op) {
      case LogicOp::And: flags[i] = x && y; break;
      case LogicOp::Or: flags[i] = x || y; break;
      case LogicOp::Xor: flags[i] = x != y; break;
      case LogicOp::Not: flags[i] = !x; break;
    }
  }
  store_flags(tile, name, in.dst, flags, in.format);
  return issue_ct(tile, name, in.n, in.format, 1);
}

namespace {

int64_t bit_op(const Tile& tile, const std::string& name, BitOp op, int64_t a, int64_t b, Format format) {
  const int bits = format == Format::INT8 ? 8 : 32;
  switch (op) {
    case BitOp::And: return a & b;
    case BitOp::Or: return a | b;
    case BitOp::Xor: return a ^ b;
    case BitOp::Not: return ~a;
    case BitOp::Shl:
    case BitOp::Shr: {
      if (b < 0 || b >= bits)
        fail(tile, name, "shift by " + std::to_string(b) + " (expected 0 to " + std::to_string(bits - 1) + ")");
      if (op == BitOp::Shr) return a >> b;
      // Wraps within the format's width, as a hardware shift does.
      const uint32_t mask = bits == 8 ? 0xffu : 0xffffffffu;
      const uint32_t shifted = (uint32_t(a) << b) & mask;
      return bits == 8 ? int64_t(int8_t(shifted)) : int64_t(int32_t(shifted));
    }
  }
  return 0;
}

uint64_t bit_impl(Tile& tile, const std::string& name, BitOp op, Format format, uint64_t src0, const int64_t* scalar,
                  uint64_t src1, uint64_t dst, int64_t n) {
  name_of(kBitNames, int32_t(op));
  check_format(tile, name, format, kInt);
  check_count(tile, name, "n", n);
  std::vector<int64_t> a = detail::load_int(tile, name, src0, n, format);
  std::vector<int64_t> b;
  if (!scalar && op != BitOp::Not) b = detail::load_int(tile, name, src1, n, format);
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = bit_op(tile, name, op, a[i], scalar ? *scalar : op == BitOp::Not ? 0 : b[i], format);
  }
  detail::store_int(tile, name, dst, a.data(), n, format);
  return issue_ct(tile, name, n, format, 1);
}

}  // namespace

uint64_t execute(Tile& tile, const BitVV& in) {
  return bit_impl(tile, detail::begin(tile, instruction_name(in)), in.op, in.format, in.src0, nullptr, in.src1, in.dst,
                  in.n);
}

uint64_t execute(Tile& tile, const BitVS& in) {
  return bit_impl(tile, detail::begin(tile, instruction_name(in)), in.op, in.format, in.src, &in.scalar, 0, in.dst,
                  in.n);
}

// ---- reduction, pooling ----

uint64_t execute(Tile& tile, const ReduceTensor& in) {
  const std::string name = detail::begin(tile, instruction_name(in));
  check_format(tile, name, in.format, kAll);
  check_count(tile, name, "outer", in.outer);
  check_count(tile, name, "inner", in.inner);
  if (in.extent <= 0) fail(tile, name, "extent = " + std::to_string(in.extent) + " must be positive");
  const int64_t total = in.outer * in.extent * in.inner, outputs = in.outer * in.inner;
  const bool fl = is_float_format(in.format);
  const Values v = load_values(tile, name, in.src, total, in.format);
  std::vector<double> acc(static_cast<size_t>(outputs));
  for (int64_t o = 0; o < in.outer; ++o) {
    double* out = acc.data() + o * in.inner;
    for (int64_t e = 0; e < in.extent; ++e) {
      const size_t base = size_t((o * in.extent + e) * in.inner);
      for (int64_t i = 0; i < in.inner; ++i) {
        const double x = fl ? double(v.f[base + size_t(i)]) : double(v.i[base + size_t(i)]);
        double& r = out[i];
        if (e == 0) {
          r = x;
        } else if (in.op == ReduceOp::Sum || in.op == ReduceOp::Mean) {
          r += x;
        } else if (std::isnan(x) || std::isnan(r)) {
          r = std::numeric_limits<double>::quiet_NaN();
        } else {
          r = in.op == ReduceOp::Max ? std::max(r, x) : std::min(r, x);
        }
      }
    }
  }
  if (in.op == ReduceOp::Mean) {
    for (double& r : acc) r /= double(in.extent);
  }
  if (fl) {
    std::vector<float> out(acc.begin(), acc.end());
    detail::store_f32(tile, name, in.dst, out.data(), outputs, in.format, in.rnd);
  } else {
    std::vector<int64_t> out(acc.size());
    for (size_t i = 0; i < acc.size(); ++i) out[i] = int64_t(in.op == ReduceOp::Mean ? std::trunc(acc[i]) : acc[i]);
    detail::store_int(tile, name, in.dst, out.data(), outputs, in.format);
  }
  return issue_ct(tile, name, total, in.format, 1);
}

uint64_t execute(Tile& tile, const PoolTensor& in) {
  const std::string name = detail::begin(tile, instruction_name(in));
  name_of(kPoolNames, int32_t(in.op));
  check_format(tile, name, in.format, kFloat);
  for (auto [what, v] : {std::pair{"n", in.n}, {"h", in.h}, {"w", in.w}, {"c", in.c}}) check_count(tile, name, what, v);
  if (in.kh <= 0 || in.kw <= 0 || in.stride_h <= 0 || in.stride_w <= 0 || in.pad_h < 0 || in.pad_w < 0) {
    fail(tile, name, "window, stride and padding must be positive (padding >= 0)");
  }
  const int64_t oh = (in.h + 2 * in.pad_h - in.kh) / in.stride_h + 1;
  const int64_t ow = (in.w + 2 * in.pad_w - in.kw) / in.stride_w + 1;
  if (oh <= 0 || ow <= 0) fail(tile, name, "the window is larger than the padded input");
  const std::vector<float> x = detail::load_f32(tile, name, in.src, in.n * in.h * in.w * in.c, in.format);
  std::vector<float> out(static_cast<size_t>(in.n * oh * ow * in.c));
  for (int64_t b = 0; b < in.n; ++b) {
    for (int64_t y = 0; y < oh; ++y) {
      for (int64_t xo = 0; xo < ow; ++xo) {
        float* o = out.data() + ((b * oh + y) * ow + xo) * in.c;
        for (int64_t c = 0; c < in.c; ++c) o[c] = in.op == PoolOp::Max ? -std::numeric_limits<float>::infinity() : 0.0f;
        for (int64_t ky = 0; ky < in.kh; ++ky) {
          const int64_t iy = y * in.stride_h - in.pad_h + ky;
          if (iy < 0 || iy >= in.h) continue;
          for (int64_t kx = 0; kx < in.kw; ++kx) {
            const int64_t ix = xo * in.stride_w - in.pad_w + kx;
            if (ix < 0 || ix >= in.w) continue;
            const float* p = x.data() + ((b * in.h + iy) * in.w + ix) * in.c;
            if (in.op == PoolOp::Max) {
              for (int64_t c = 0; c < in.c; ++c) o[c] = std::max(o[c], p[c]);
            } else {
              for (int64_t c = 0; c < in.c; ++c) o[c] += p[c];
            }
          }
        }
        if (in.op == PoolOp::Avg) {
          for (int64_t c = 0; c < in.c; ++c) o[c] /= float(in.kh * in.kw);
        }
      }
    }
  }
  detail::store_f32(tile, name, in.dst, out.data(), int64_t(out.size()), in.format, in.rnd);
  return issue_ct(tile, name, int64_t(out.size()) * in.kh * in.kw, in.format, 1);
}

// ---- data movement, conversion ----

uint64_t execute(Tile& tile, const MoveV& in) {
  const std::string name = detail::begin(tile, instruction_name(in));
  check_format(tile, name, in.format, kAll);
  check_count(tile, name, "n", in.n);
  const uint64_t bytes = uint64_t(in.n) * format_bytes(in.format);
  const uint8_t* src = tile.spm().read_span(name, in.src, bytes);
  const std::vector<uint8_t> copy(src, src + bytes);
  std::copy(copy.begin(), copy.end(), tile.spm().write_span(name, in.dst, bytes));
  return issue_ct(tile, name, in.n, in.format, 1);
}

uint64_t execute(Tile& tile, const FillV& in) {
  const std::string name = detail::begin(tile, instruction_name(in));
  check_format(tile, name, in.format, kAll);
  check_count(tile, name, "n", in.n);
  if (is_float_format(in.format)) {
    const std::vector<float> values(static_cast<size_t>(in.n), float(in.value));
    detail::store_f32(tile, name, in.dst, values.data(), in.n, in.format, RoundMode::NearestEven);
  } else {
    if (in.value != std::trunc(in.value))
      fail(tile, name, "the value " + std::to_string(in.value) + " is not an integer");
    const std::vector<int64_t> values(static_cast<size_t>(in.n), int64_t(in.value));
    detail::store_int(tile, name, in.dst, values.data(), in.n, in.format);
  }
  return issue_ct(tile, name, in.n, in.format, 1);
}

uint64_t execute(Tile& tile, const TransposeTensor& in) {
  const std::string name = detail::begin(tile, instruction_name(in));
  check_format(tile, name, in.format, kAll);
  check_count(tile, name, "rows", in.rows);
  check_count(tile, name, "cols", in.cols);
  const uint64_t eb = format_bytes(in.format), n = uint64_t(in.rows * in.cols);
  const uint8_t* s = tile.spm().read_span(name, in.src, n * eb);
  const std::vector<uint8_t> src(s, s + n * eb);
  uint8_t* d = tile.spm().write_span(name, in.dst, n * eb);
  for (int64_t r = 0; r < in.rows; ++r) {
    for (int64_t c = 0; c < in.cols; ++c) {
      std::copy_n(src.data() + uint64_t(r * in.cols + c) * eb, eb, d + uint64_t(c * in.rows + r) * eb);
    }
  }
  return issue_ct(tile, name, int64_t(n), in.format, 1);
}

uint64_t execute(Tile& tile, const ConvertV& in) {
  const std::string name = detail::begin(tile, instruction_name(in));
  check_format(tile, name, in.from, kAll);
  check_format(tile, name, in.to, kAll);
  check_count(tile, name, "n", in.n);
  if (!is_float_format(in.from) && !is_float_format(in.to)) {  // exact, saturating
    const std::vector<int64_t> v = detail::load_int(tile, name, in.src, in.n, in.from);
    detail::store_int(tile, name, in.dst, v.data(), in.n, in.to);
  } else {
    const std::vector<float> v = detail::load_f32(tile, name, in.src, in.n, in.from);
    detail::store_f32(tile, name, in.dst, v.data(), in.n, in.to, in.rnd);
  }
  // The wider of the two formats sets the rate.
  const Format wider = format_bytes(in.from) >= format_bytes(in.to) ? in.from : in.to;
  return issue_ct(tile, name, in.n, wider, 1);
}

}  // namespace tg::sim::cgra
