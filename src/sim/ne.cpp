#include "tilegraph/sim/ne.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "host_kernels.h"
#include "instruction_util.h"
#include "tilegraph/core/error.h"
#include "tilegraph/core/quant.h"

namespace tg::sim::ne {

namespace {

using detail::check_count;
using detail::check_format;
using detail::fail;

// An f32 sum of int8 products is exact while it stays below 2^24: 1024 products of at most 2^14.
constexpr int64_t kExactInt8Depth = 1024;

cgra::UnaryOp as_unary(Activation act) {
  switch (act) {
    case Activation::Relu: return cgra::UnaryOp::Relu;
    case Activation::Gelu: return cgra::UnaryOp::Gelu;
    case Activation::Silu: return cgra::UnaryOp::Silu;
    case Activation::Sigmoid: return cgra::UnaryOp::Sigmoid;
    case Activation::Tanh: return cgra::UnaryOp::Tanh;
    case Activation::None: break;
  }
  return cgra::UnaryOp::Relu;
}

bool default_post(const PostProcess& p) {
  return p.input_scale == 1.0f && p.bias == kNoAddress && p.bn_scale == kNoAddress && p.bn_shift == kNoAddress &&
         p.act == Activation::None;
}

void check_post(const Tile& tile, const std::string& name, Format in_format, const PostProcess& post, bool accumulate) {
  check_format(tile, name, post.out_format, {Format::FP32, Format::FP16, Format::BF16, Format::INT8, Format::INT32});
  if (int32_t(post.act) < 0 || int32_t(post.act) > int32_t(Activation::Tanh)) fail(tile, name, "unknown activation");
  if ((post.bn_scale == kNoAddress) != (post.bn_shift == kNoAddress)) {
    fail(tile, name, "batch-norm post-processing needs both bn_scale and bn_shift");
  }
  if (post.bias != kNoAddress && post.bn_scale != kNoAddress) fail(tile, name, "give a bias or a batch norm, not both");
  const Format raw = in_format == Format::INT8 ? Format::INT32 : Format::FP32;
  if (post.out_format == Format::INT32 && (in_format != Format::INT8 || !default_post(post))) {
    fail(tile, name, "int32 output is the raw accumulator of an int8 GEMM without post-processing");
  }
  if (accumulate && (!default_post(post) || post.out_format != raw)) {
    fail(tile, name,
         "accumulate sums into the raw " + std::string(format_name(raw)) +
             " accumulator: it takes no post-processing and no other output format");
  }
}

void apply_post(Tile& tile, const std::string& name, std::vector<float>& acc, int64_t m, int64_t n,
                const PostProcess& post, uint64_t dst);

// dst = post(A . B (+ dst)). A is M x K f32 (values exactly those of the input format), B K x N
// or N x K f32.
void multiply_and_store(Tile& tile, const std::string& name, Format in_format, const std::vector<float>& a,
                        const std::vector<float>& b, bool b_transposed, int64_t m, int64_t n, int64_t k,
                        bool accumulate, const PostProcess& post, uint64_t dst) {
  const HostKernels& kernels = host_kernels();
  const size_t outputs = size_t(m * n);
  std::vector<float> acc(outputs, 0.0f);
  auto operand_a = [&](int64_t k0) { return evg::MatrixOperand{a.data() + k0, evg::ElementType::F32, k, false}; };
  auto operand_b = [&](int64_t k0) {
    return b_transposed ? evg::MatrixOperand{b.data() + k0, evg::ElementType::F32, k, true}
                        : evg::MatrixOperand{b.data() + k0 * n, evg::ElementType::F32, n, false};
  };
  if (in_format != Format::INT8) {
    if (m > 0 && n > 0) kernels.gemm(operand_a(0), operand_b(0), m, n, k, acc.data(), n);
  } else {
    // int32 accumulation, exact: f32 GEMMs over K blocks whose sums are exact, added as integers.
    std::vector<double> sum(outputs, 0.0);
    std::vector<float> part(outputs);
    for (int64_t k0 = 0; k0 < k && m > 0 && n > 0; k0 += kExactInt8Depth) {
      kernels.gemm(operand_a(k0), operand_b(k0), m, n, std::min(kExactInt8Depth, k - k0), part.data(), n);
      for (size_t i = 0; i < outputs; ++i) sum[i] += double(part[i]);
    }
    if (accumulate) {
      const std::vector<int64_t> old = detail::load_int(tile, name, dst, int64_t(outputs), Format::INT32);
      for (size_t i = 0; i < outputs; ++i) sum[i] += double(old[i]);
    }
    if (post.out_format == Format::INT32) {
      std::vector<int64_t> out(outputs);
      for (size_t i = 0; i < outputs; ++i) out[i] = int64_t(sum[i]);
      detail::store_int(tile, name, dst, out.data(), int64_t(outputs), Format::INT32);
      return;
    }
    for (size_t i = 0; i < outputs; ++i) acc[i] = float(sum[i]);
  }
  if (accumulate && in_format != Format::INT8) {
    const std::vector<float> old = detail::load_f32(tile, name, dst, int64_t(outputs), Format::FP32);
    for (size_t i = 0; i < outputs; ++i) acc[i] += old[i];
  }
  apply_post(tile, name, acc, m, n, post, dst);
}

// dst = convert(act(acc * input_scale + bias or batch norm)): the NE's post-processing of an f32
// accumulator of M x N.
void apply_post(Tile& tile, const std::string& name, std::vector<float>& acc, int64_t m, int64_t n,
                const PostProcess& post, uint64_t dst) {
  const HostKernels& kernels = host_kernels();
  const size_t outputs = acc.size();
  if (post.input_scale != 1.0f)
    kernels.binary_scalar(cgra::ArithOp::Mul, acc.data(), post.input_scale, false, acc.data(), int64_t(outputs));
  if (post.bias != kNoAddress) {
    const std::vector<float> bias = detail::load_f32(tile, name, post.bias, n, Format::FP32);
    for (int64_t i = 0; i < m; ++i)
      kernels.binary(cgra::ArithOp::Add, acc.data() + i * n, bias.data(), acc.data() + i * n, n);
  }
  if (post.bn_scale != kNoAddress) {
    const std::vector<float> scale = detail::load_f32(tile, name, post.bn_scale, n, Format::FP32);
    const std::vector<float> shift = detail::load_f32(tile, name, post.bn_shift, n, Format::FP32);
    for (int64_t i = 0; i < m; ++i) {
      float* row = acc.data() + i * n;
      kernels.binary(cgra::ArithOp::Mul, row, scale.data(), row, n);
      kernels.binary(cgra::ArithOp::Add, row, shift.data(), row, n);
    }
  }
  if (post.act != Activation::None) kernels.unary(as_unary(post.act), acc.data(), acc.data(), int64_t(outputs));
  if (post.out_format == Format::INT8 && post.output_scale != 1.0f) {
    kernels.binary_scalar(cgra::ArithOp::Mul, acc.data(), post.output_scale, false, acc.data(), int64_t(outputs));
  }
  detail::store_f32(tile, name, dst, acc.data(), int64_t(outputs), post.out_format, post.rnd);
}

// Loads n elements as f32 holding exactly the values the NE multiplies (tf32 rounded).
std::vector<float> load_operand(Tile& tile, const std::string& name, uint64_t addr, int64_t n, Format format) {
  if (format == Format::TF32) {
    std::vector<float> v = detail::load_f32(tile, name, addr, n, Format::FP32);
    for (float& x : v) x = round_to(Format::TF32, x);
    return v;
  }
  return detail::load_f32(tile, name, addr, n, format);
}

uint64_t issue_ne(Tile& tile, std::string name, Format in_format, int64_t m, int64_t n, int64_t k) {
  Work work;
  work.latency = gemm_cycles(tile.config(), in_format, m, n, k);
  return detail::issue(tile, Engine::NE, std::move(name), std::move(work));
}

constexpr std::initializer_list<Format> kInputs = {Format::FP32, Format::TF32, Format::FP16, Format::BF16,
                                                   Format::INT8};

}  // namespace

uint64_t gemm_cycles(const ChipConfig& c, Format in_format, int64_t m, int64_t n, int64_t k) {
  const uint64_t steps =
      detail::ceil_div(uint64_t(m), 8) * detail::ceil_div(uint64_t(k), 16) * detail::ceil_div(uint64_t(n), 8);
  const double cycles = double(steps) * c.ne_cycles_per_step(in_format) / c.ne.arrays_per_tile;
  return uint64_t(c.ne.latency_cycles) + uint64_t(std::ceil(cycles));
}

std::string instruction_name(const GemmQ8_0&) { return "NE_Gemm.q8_0"; }

uint64_t execute(Tile& tile, const GemmQ8_0& in) {
  const std::string name = detail::begin(tile, instruction_name(in));
  check_count(tile, name, "m", in.m);
  check_count(tile, name, "n", in.n);
  check_count(tile, name, "k", in.k);
  if (in.k % kQ8_0BlockSize != 0) fail(tile, name, "k = " + std::to_string(in.k) + " is not whole q8_0 blocks of 32");
  check_format(tile, name, in.post.out_format, {Format::FP32, Format::FP16, Format::BF16});
  check_post(tile, name, Format::FP32, in.post, false);
  const int64_t blocks = in.k / kQ8_0BlockSize;
  const std::vector<float> a = detail::load_f32(tile, name, in.a, in.m * in.k, Format::FP32);
  const uint8_t* b_bytes = tile.spm().read_span(name, in.b, uint64_t(in.n * blocks) * sizeof(BlockQ8_0));
  std::vector<BlockQ8_0> b(size_t(in.n * blocks));
  std::memcpy(b.data(), b_bytes, b.size() * sizeof(BlockQ8_0));
  std::vector<BlockQ8_32> qa(size_t(in.m * blocks));
  for (int64_t i = 0; i < in.m; ++i) quantize_row_q8_32(a.data() + i * in.k, qa.data() + i * blocks, in.k);

  std::vector<float> acc(size_t(in.m * in.n), 0.0f);
  for (int64_t i = 0; i < in.m; ++i) {
    for (int64_t j = 0; j < in.n; ++j) {
      float sum = 0.0f;
      for (int64_t blk = 0; blk < blocks; ++blk) {
        const BlockQ8_32& x = qa[size_t(i * blocks + blk)];
        const BlockQ8_0& w = b[size_t(j * blocks + blk)];
        int32_t dot = 0;
        for (int l = 0; l < kQ8_0BlockSize; ++l) dot += int32_t(x.qs[l]) * int32_t(w.qs[l]);
        sum += x.d * f16_to_f32(w.d) * float(dot);
      }
      acc[size_t(i * in.n + j)] = sum;
    }
  }
  apply_post(tile, name, acc, in.m, in.n, in.post, in.dst);
  return issue_ne(tile, name, Format::INT8, in.m, in.n, in.k);
}

std::string instruction_name(const Gemm& in) { return "NE_Gemm." + std::string(format_name(in.in_format)); }
std::string instruction_name(const Conv& in) { return "NE_Conv." + std::string(format_name(in.in_format)); }

uint64_t execute(Tile& tile, const Gemm& in) {
  const std::string name = detail::begin(tile, instruction_name(in));
  check_format(tile, name, in.in_format, kInputs);
  check_count(tile, name, "m", in.m);
  check_count(tile, name, "n", in.n);
  check_count(tile, name, "k", in.k);
  check_post(tile, name, in.in_format, in.post, in.accumulate);
  const std::vector<float> a = load_operand(tile, name, in.a, in.m * in.k, in.in_format);
  const std::vector<float> b = load_operand(tile, name, in.b, in.k * in.n, in.in_format);
  multiply_and_store(tile, name, in.in_format, a, b, in.b_transposed, in.m, in.n, in.k, in.accumulate, in.post, in.dst);
  return issue_ne(tile, name, in.in_format, in.m, in.n, in.k);
}

uint64_t execute(Tile& tile, const Conv& in) {
  const std::string name = detail::begin(tile, instruction_name(in));
  check_format(tile, name, in.in_format, kInputs);
  for (auto [what, v] : {std::pair{"n", in.n},
                         {"h", in.h},
                         {"w", in.w},
                         {"cin", in.cin},
                         {"cout", in.cout},
                         {"kh", in.kh},
                         {"kw", in.kw}}) {
    check_count(tile, name, what, v);
  }
  if (in.stride_h <= 0 || in.stride_w <= 0 || in.dil_h <= 0 || in.dil_w <= 0 || in.pad_h < 0 || in.pad_w < 0) {
    fail(tile, name, "strides and dilations must be positive and padding >= 0");
  }
  check_post(tile, name, in.in_format, in.post, false);
  const int64_t oh = (in.h + 2 * in.pad_h - in.dil_h * (in.kh - 1) - 1) / in.stride_h + 1;
  const int64_t ow = (in.w + 2 * in.pad_w - in.dil_w * (in.kw - 1) - 1) / in.stride_w + 1;
  if (oh <= 0 || ow <= 0) fail(tile, name, "the dilated kernel is larger than the padded input");
  const std::vector<float> x = load_operand(tile, name, in.input, in.n * in.h * in.w * in.cin, in.in_format);
  const int64_t m = in.n * oh * ow, k = in.kh * in.kw * in.cin;
  const std::vector<float> weight = load_operand(tile, name, in.weight, k * in.cout, in.in_format);
  // im2col: row (b, y, x) of the GEMM's A holds the window's KH x KW x Cin inputs, zeros in padding.
  std::vector<float> cols(static_cast<size_t>(m * k), 0.0f);
  for (int64_t b = 0; b < in.n; ++b) {
    for (int64_t y = 0; y < oh; ++y) {
      for (int64_t xo = 0; xo < ow; ++xo) {
        float* row = cols.data() + ((b * oh + y) * ow + xo) * k;
        for (int64_t ky = 0; ky < in.kh; ++ky) {
          const int64_t iy = y * in.stride_h - in.pad_h + ky * in.dil_h;
          if (iy < 0 || iy >= in.h) continue;
          for (int64_t kx = 0; kx < in.kw; ++kx) {
            const int64_t ix = xo * in.stride_w - in.pad_w + kx * in.dil_w;
            if (ix < 0 || ix >= in.w) continue;
            std::copy_n(x.data() + ((b * in.h + iy) * in.w + ix) * in.cin, in.cin, row + (ky * in.kw + kx) * in.cin);
          }
        }
      }
    }
  }
  multiply_and_store(tile, name, in.in_format, cols, weight, false, m, in.cout, k, false, in.post, in.dst);
  return issue_ne(tile, name, in.in_format, m, in.cout, k);
}

}  // namespace tg::sim::ne
