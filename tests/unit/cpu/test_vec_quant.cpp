// The quantized-row primitives (dequantize, the dot_*_rows kernels, the activation quantizers) of
// every quantized type on every ISA this machine can run: blocks of random bytes (every nibble and
// bit pattern, random f16 scales) against the core's scalar dequantization, which
// tests/unit/core/test_quant.cpp checks by hand; dot products against a double-precision sum (of
// the activations rounded as the type takes them, quant.h); and the property graph replay relies
// on — an output does not depend on which other rows and tokens share its call.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

#include "common/tensor_utils.h"
#include "interleaved_rows.h"
#include "kernels.h"
#include "tilegraph/core/error.h"
#include "tilegraph/core/quant.h"
#include "vec.h"

namespace tg::cpu {
namespace {

const DType kQuantTypes[] = {DType::Q8_0, DType::Q4_0, DType::Q4_1, DType::Q5_0,
                             DType::Q5_1, DType::Q4_K, DType::Q5_K, DType::Q6_K};

// `tokens` activation rows of n elements (x_stride floats apart) as the kernel of `type` takes
// them (quant.h, activation_type: q8_32 or q8_K), and their values as its products use them.
struct Activations {
  DType type;
  int64_t n, x_stride, stride;  // stride: between the tokens' rows of blocks
  std::vector<float> values;
  std::vector<BlockQ8_K> q8k;
  std::vector<BlockQ8_32> q8_32;
  mutable Scratch dot_scratch;  // dot_q8_32_rows', as a thread's in mat_vec

  Activations(DType type_, const std::vector<float>& x, int64_t n_, int64_t tokens, int64_t x_stride_)
      : type(type_), n(n_), x_stride(x_stride_), stride(0), values(x) {
    const ActivationType kind = activation_type(type);
    if (kind == ActivationType::Q8_K) {
      stride = n / 256;
      q8k.resize(size_t(tokens * stride));
    } else {
      stride = n / 32;
      q8_32.resize(size_t(tokens * stride));
    }
    for (int64_t t = 0; t < tokens; ++t) {
      if (kind == ActivationType::Q8_K) {
        quantize_row_q8_K(x.data() + t * x_stride, q8k.data() + t * stride, n);
        dequantize_row_q8_K(q8k.data() + t * stride, values.data() + t * x_stride, n);
      } else {
        quantize_row_q8_32(x.data() + t * x_stride, q8_32.data() + t * stride, n);
        dequantize_row_q8_32(q8_32.data() + t * stride, values.data() + t * x_stride, n);
      }
    }
  }

  // The first token's blocks, of whichever format `type` takes.
  const void* blocks() const {
    return activation_type(type) == ActivationType::Q8_K ? static_cast<const void*>(q8k.data()) : q8_32.data();
  }

  // The kernel of `type`: `count` rows from `rows` against tokens first .. first + tokens - 1.
  void dot(const VecKernels& vec, int64_t count, const char* rows, size_t row_stride, int64_t first, int64_t tokens,
           float* out, int64_t out_stride, int row_streams = kMaxMatVecRowStreams) const {
    switch (activation_type(type)) {
      case ActivationType::Q8_K:
        return vec.dot_q8k_rows(type, n, count, rows, row_stride, tokens, q8k.data() + first * stride, stride, out,
                                out_stride, row_streams);
      case ActivationType::Q8_32:
        return vec.dot_q8_32_rows(type, n, count, rows, row_stride, tokens, q8_32.data() + first * stride, stride, out,
                                  out_stride, row_streams, dot_scratch.bytes(dot_q8_32_scratch_bytes(n, tokens)));
      case ActivationType::F32:
      case ActivationType::BF16: break;
    }
    ADD_FAILURE() << dtype_name(type) << " takes float activations";
  }
};

// The part of each weight that does not depend on its quant (q4_0 -8d, q5_0 -16d, q4_1/q5_1 m,
// q4_K/q5_K -dmin m_s, q6_K -32 d sc_s), which the integer kernels sum apart from the rest: the
// blocks with their quants zeroed. None for q8_0.
std::vector<double> quant_offsets(DType type, const char* row, int64_t n) {
  const size_t block_bytes = dtype_traits(type).type_size;
  const int64_t blocks = n / int64_t(dtype_traits(type).block_size);
  std::vector<char> copy(row, row + size_t(blocks) * block_bytes);
  for (int64_t b = 0; b < blocks; ++b) {
    char* blk = copy.data() + size_t(b) * block_bytes;
    switch (type) {
      case DType::Q4_0: std::memset(reinterpret_cast<BlockQ4_0*>(blk)->qs, 0, 16); break;
      case DType::Q4_1: std::memset(reinterpret_cast<BlockQ4_1*>(blk)->qs, 0, 16); break;
      case DType::Q5_0:
        std::memset(reinterpret_cast<BlockQ5_0*>(blk)->qs, 0, 16);
        std::memset(reinterpret_cast<BlockQ5_0*>(blk)->qh, 0, 4);
        break;
      case DType::Q5_1:
        std::memset(reinterpret_cast<BlockQ5_1*>(blk)->qs, 0, 16);
        std::memset(reinterpret_cast<BlockQ5_1*>(blk)->qh, 0, 4);
        break;
      case DType::Q4_K: std::memset(reinterpret_cast<BlockQ4_K*>(blk)->qs, 0, 128); break;
      case DType::Q5_K:
        std::memset(reinterpret_cast<BlockQ5_K*>(blk)->qs, 0, 128);
        std::memset(reinterpret_cast<BlockQ5_K*>(blk)->qh, 0, 32);
        break;
      case DType::Q6_K:
        std::memset(reinterpret_cast<BlockQ6_K*>(blk)->ql, 0, 128);
        std::memset(reinterpret_cast<BlockQ6_K*>(blk)->qh, 0, 64);
        break;
      default: return std::vector<double>(size_t(n), 0.0);
    }
  }
  std::vector<float> values(static_cast<size_t>(n));
  row_to_f32(type, copy.data(), values.data(), n);
  return {values.begin(), values.end()};
}

// Byte offsets of a block's f16 fields, which random bytes must not fill with inf or NaN.
std::vector<size_t> f16_fields(DType type) {
  switch (type) {
    case DType::Q4_1:
    case DType::Q5_1:
    case DType::Q4_K:
    case DType::Q5_K: return {0, 2};
    case DType::Q6_K: return {offsetof(BlockQ6_K, d)};
    default: return {0};
  }
}

// `count` rows of n elements of random blocks, padded one block apart, and their values as the
// core dequantizes them.
struct QuantRows {
  DType type;
  int64_t n, count, block;
  size_t block_bytes, stride;
  std::vector<char> bytes;
  std::vector<double> values;  // count x n

  QuantRows(DType type_, int64_t n_, int64_t count_, test::Rng& rng)
      : type(type_),
        n(n_),
        count(count_),
        block(int64_t(dtype_traits(type_).block_size)),
        block_bytes(dtype_traits(type_).type_size),
        stride(size_t(n_ / block + 1) * block_bytes) {
    bytes.assign(size_t(count) * stride, 0);
    values.resize(size_t(count * n));
    std::uniform_real_distribution<float> scale(1e-3f, 2.0f);
    std::vector<float> row(static_cast<size_t>(n));
    for (int64_t j = 0; j < count; ++j) {
      char* r = bytes.data() + size_t(j) * stride;
      for (int64_t b = 0; b < n / block; ++b) {
        char* blk = r + size_t(b) * block_bytes;
        for (size_t i = 0; i < block_bytes; ++i) blk[i] = char(rng());
        for (size_t offset : f16_fields(type)) {
          // Mostly normal scales of either sign, some f16 subnormals (6e-8 is the smallest).
          const float s = (b % 7 == 3 ? 3e-6f : scale(rng)) * (rng() % 2 ? -1.0f : 1.0f);
          const f16 h = f32_to_f16(s);
          std::memcpy(blk + offset, &h, sizeof h);
        }
      }
      row_to_f32(type, r, row.data(), n);
      for (int64_t i = 0; i < n; ++i) values[size_t(j * n + i)] = row[size_t(i)];
    }
  }
};

// Row j of `a` against activation row x (the values the kernel multiplies), in double, and the
// error an f32 kernel may make: f32 accumulation of n products of exact f32 weights, at most n
// roundings of the magnitudes summed. The integer kernels sum a weight's offset (`offsets`,
// quant_offsets) and the rest apart, and either may be the larger.
// q4_1's and q5_1's offset m multiplies each activation block's sum s (BlockQ8_32::s, rounded to
// f16 as in ggml's q8_1), not the block's values: `sums` are then the token's blocks
// (offset_sums), and the reference takes the offsets against them too.
struct ReferenceDot {
  double want, bound;
};
ReferenceDot reference_dot(const QuantRows& a, int64_t j, const float* x, const std::vector<double>& offsets,
                           const BlockQ8_32* sums) {
  double want = 0.0, magnitude = 0.0;
  for (int64_t i = 0; i < a.n; ++i) {
    const double w = a.values[size_t(j * a.n + i)], xi = x[i];
    const double offset = offsets[size_t(i)];
    want += (sums ? w - offset : w) * xi;
    magnitude += (std::abs(w - offset) + std::abs(offset)) * std::abs(xi);
  }
  if (sums) {
    for (int64_t b = 0; b < a.n / kQ8_32BlockSize; ++b) want += offsets[size_t(b * kQ8_32BlockSize)] * sums[b].s;
  }
  return {want, double(a.n) * 0x1p-24 * magnitude};
}
const BlockQ8_32* offset_sums(const Activations& xa, int64_t token) {
  const bool offset_by_sum = xa.type == DType::Q4_1 || xa.type == DType::Q5_1;
  return offset_by_sum ? xa.q8_32.data() + token * xa.stride : nullptr;
}

TEST(VecQuant, DequantizeGivesTheCoresValuesOnEveryIsa) {
  test::Rng rng(20);
  for (DType type : kQuantTypes) {
    const int64_t n = 4 * int64_t(dtype_traits(type).block_size);
    const QuantRows a(type, n, 3, rng);
    for (Isa isa : runnable_isas()) {
      for (int64_t j = 0; j < a.count; ++j) {
        std::vector<float> out(size_t(n + 1), -7.0f);
        vec_kernels(isa).dequantize(type, n, out.data(), a.bytes.data() + size_t(j) * a.stride);
        for (int64_t i = 0; i < n; ++i) {
          // Equal values; a zero's sign may differ ((q - 8) * d is -0 for a negative d, the
          // fused q * d - 8d is +0).
          ASSERT_EQ(out[size_t(i)], float(a.values[size_t(j * n + i)]))
              << dtype_name(type) << " " << isa_name(isa) << " row " << j << " element " << i;
        }
        ASSERT_EQ(out[size_t(n)], -7.0f) << dtype_name(type) << " " << isa_name(isa) << " wrote past the row";
      }
    }
  }
}

// Every output of the kernel of `type` (Activations::dot) for each count in `counts` and tokens in `token_counts`.
void expect_matches_reference(DType type, int64_t n, const std::vector<int64_t>& counts,
                              const std::vector<int64_t>& token_counts, test::Rng& rng) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  const QuantRows a(type, n, counts.back(), rng);
  const int64_t x_stride = n + 5;  // activation rows padded apart
  std::vector<float> x(size_t(token_counts.back() * x_stride));
  for (float& v : x) v = dist(rng);
  const Activations xa(type, x, n, token_counts.back(), x_stride);
  std::vector<std::vector<double>> offsets;
  for (int64_t j = 0; j < a.count; ++j)
    offsets.push_back(quant_offsets(type, a.bytes.data() + size_t(j) * a.stride, n));
  for (Isa isa : runnable_isas()) {
    const VecKernels& vec = vec_kernels(isa);
    for (int64_t count : counts) {
      for (int64_t tokens : token_counts) {
        const int64_t out_stride = count + 3;  // the padding must stay untouched
        std::vector<float> out(size_t(tokens * out_stride), -7.0f);
        xa.dot(vec, count, a.bytes.data(), a.stride, 0, tokens, out.data(), out_stride);
        for (int64_t t = 0; t < tokens; ++t) {
          for (int64_t j = 0; j < out_stride; ++j) {
            const float got = out[size_t(t * out_stride + j)];
            if (j >= count) {
              ASSERT_EQ(got, -7.0f) << isa_name(isa) << " wrote past row " << count;
              continue;
            }
            const ReferenceDot ref =
                reference_dot(a, j, xa.values.data() + t * x_stride, offsets[size_t(j)], offset_sums(xa, t));
            ASSERT_NEAR(got, ref.want, ref.bound)
                << dtype_name(type) << " " << isa_name(isa) << " n=" << n << " count=" << count << " tokens=" << tokens
                << " row " << j << " token " << t;
          }
        }
      }
    }
  }
}

TEST(VecQuant, DotRowsMatchDoubleReferenceOnEveryIsa) {
  test::Rng rng(21);
  for (DType type : kQuantTypes) {
    const int64_t block = int64_t(dtype_traits(type).block_size);
    for (int64_t blocks : {1, 2, 3, 5, 7, 13}) {
      expect_matches_reference(type, blocks * block, {1, 2, 3, 4, 5, 6, 7, 8, 9, 33}, {1, 2, 3, 4, 5, 8, 9}, rng);
    }
    expect_matches_reference(type, 4096, {1, 8, 9, 129}, {1, 2, 5}, rng);
  }
  // Enough rows of 4096 for several of the 256 KiB panels the rows are walked in.
  expect_matches_reference(DType::Q8_0, 4096, {131}, {1, 5}, rng);
  expect_matches_reference(DType::Q4_K, 4096, {300}, {1, 3}, rng);
}

TEST(VecQuant, DotRowsOutputsDoNotDependOnTheirNeighbours) {
  test::Rng rng(22);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (DType type : kQuantTypes) {
    const int64_t n = (dtype_traits(type).block_size == 32 ? 29 : 3) * int64_t(dtype_traits(type).block_size);
    const int64_t rows = 9, tokens = 7;
    const QuantRows a(type, n, rows, rng);
    std::vector<float> x(size_t(tokens * n));
    for (float& v : x) v = dist(rng);
    for (Isa isa : runnable_isas()) {
      const VecKernels& vec = vec_kernels(isa);
      const Activations xa(type, x, n, tokens, n);
      auto dot = [&](int64_t count, const char* first, int64_t token_count, int64_t t, float* out, int64_t out_stride,
                     int row_streams) {
        xa.dot(vec, count, first, a.stride, t, token_count, out, out_stride, row_streams);
      };
      // However many rows a tile reads at once (matvec_row_streams differs between CPUs).
      for (int row_streams = 1; row_streams <= kMaxMatVecRowStreams; ++row_streams) {
        std::vector<float> together(size_t(tokens * rows));
        dot(rows, a.bytes.data(), tokens, 0, together.data(), rows, row_streams);
        for (int64_t j = 0; j < rows; ++j) {
          for (int64_t t = 0; t < tokens; ++t) {
            float alone = 0.0f;
            dot(1, a.bytes.data() + size_t(j) * a.stride, 1, t, &alone, 1, kMaxMatVecRowStreams);
            ASSERT_EQ(std::bit_cast<uint32_t>(together[size_t(t * rows + j)]), std::bit_cast<uint32_t>(alone))
                << dtype_name(type) << " " << isa_name(isa) << " row " << j << " token " << t << ", " << row_streams
                << " rows at once";
          }
        }
      }
    }
  }
}

// The vector tables' matrix-vector kernels (AVX2's maddubs + madd, AVX512_VNNI's vpdpbusd, ...)
// sum the same elements in each int32 lane and fold the lanes into f32 in the same order, so they
// give the AVX2 table's bits: a model decodes the same tokens whichever of them runs it.
TEST(VecQuant, DotRowsGiveTheAvx2TablesBitsOnEveryVectorIsa) {
  const std::vector<Isa> isas = runnable_isas();
  if (std::find(isas.begin(), isas.end(), Isa::AVX2) == isas.end()) GTEST_SKIP() << "no AVX2";
  test::Rng rng(26);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (DType type : kQuantTypes) {
    const int64_t block = int64_t(dtype_traits(type).block_size);
    for (int64_t blocks : {1, 2, 3, 4, 5, 7, 8, 13, 64}) {
      const int64_t n = blocks * block, rows = 11, tokens = 8;
      const QuantRows a(type, n, rows, rng);
      std::vector<float> x(size_t(tokens * n));
      for (float& v : x) v = dist(rng);
      const Activations xa(type, x, n, tokens, n);
      for (int64_t count : {1, 2, 3, 4, 5, 7, 11}) {
        for (int64_t t = 1; t <= tokens; ++t) {
          std::vector<float> want(size_t(t * count));
          xa.dot(vec_kernels(Isa::AVX2), count, a.bytes.data(), a.stride, 0, t, want.data(), count);
          for (Isa isa : isas) {
            if (isa == Isa::SCALAR || isa == Isa::AVX2) continue;
            std::vector<float> got(size_t(t * count));
            xa.dot(vec_kernels(isa), count, a.bytes.data(), a.stride, 0, t, got.data(), count);
            for (size_t i = 0; i < got.size(); ++i) {
              ASSERT_EQ(std::bit_cast<uint32_t>(got[i]), std::bit_cast<uint32_t>(want[i]))
                  << dtype_name(type) << " " << isa_name(isa) << " n=" << n << " count=" << count << " tokens=" << t
                  << " output " << i << ": " << got[i] << " vs AVX2's " << want[i];
            }
          }
        }
      }
    }
  }
}

TEST(VecQuant, ActivationQuantizersGiveTheCoresBytesOnEveryIsa) {
  test::Rng rng(23);
  std::normal_distribution<float> dist(0.0f, 2.0f);
  const int64_t n = 256 * 6;
  std::vector<float> x(static_cast<size_t>(n));
  for (float& v : x) v = dist(rng);
  // Block 1 of ties (k + 0.5 steps, to even), block 2 of zeros, block 3 holds a NaN, block 4 an
  // inf, block 5 subnormals.
  for (int i = 0; i < 256; ++i) x[size_t(256 + i)] = float(i % 64 - 32) + 0.5f;
  for (int i = 0; i < 256; i += 32) x[size_t(256 + i)] = 127.0f;  // d = 1 in every 32 too
  std::fill_n(x.begin() + 512, 256, 0.0f);
  x[3 * 256 + 100] = std::numeric_limits<float>::quiet_NaN();
  x[4 * 256 + 7] = -std::numeric_limits<float>::infinity();
  for (int i = 0; i < 256; ++i) x[size_t(5 * 256 + i)] = float(i - 100) * 3e-43f;
  // Equal bytes, but a NaN's payload may differ.
  auto same = [](auto got, auto want) {
    if (std::isnan(want.d) && std::isnan(got.d)) got.d = want.d;
    if constexpr (requires { want.s; }) {
      if (std::isnan(want.s) && std::isnan(got.s)) got.s = want.s;
    }
    return std::memcmp(&got, &want, sizeof got) == 0;
  };
  std::vector<BlockQ8_K> want_k(size_t(n / 256));
  std::vector<BlockQ8_32> want_32(size_t(n / 32));
  quantize_row_q8_K(x.data(), want_k.data(), n);
  quantize_row_q8_32(x.data(), want_32.data(), n);
  for (Isa isa : runnable_isas()) {
    std::vector<BlockQ8_K> got_k(want_k.size());
    std::vector<BlockQ8_32> got_32(want_32.size());
    std::memset(got_k.data(), 0x5A, got_k.size() * sizeof(BlockQ8_K));
    std::memset(got_32.data(), 0x5A, got_32.size() * sizeof(BlockQ8_32));
    vec_kernels(isa).quantize_q8k(n, got_k.data(), x.data());
    vec_kernels(isa).quantize_q8_32(n, got_32.data(), x.data());
    for (size_t b = 0; b < want_k.size(); ++b)
      EXPECT_TRUE(same(got_k[b], want_k[b])) << isa_name(isa) << " q8_K block " << b;
    for (size_t b = 0; b < want_32.size(); ++b)
      EXPECT_TRUE(same(got_32[b], want_32[b])) << isa_name(isa) << " q8_32 block " << b;
  }
}

// The integer GEMM's activation blocks (QuantGemmLayout): the core's 8-bit quants and scale, and
// d times each group's sum of quants (for q8_0's signed weights, the int32 sum itself; for q4_1's
// and q5_1's offsets the q8_32 block's s, in f16 as decode takes it).
TEST(VecQuant, GemmActivationBlocksHoldTheCoresQuantsOnEveryIsa) {
  test::Rng rng(24);
  std::normal_distribution<float> dist(0.0f, 2.0f);
  for (DType type : {DType::Q8_0, DType::Q4_0, DType::Q4_1, DType::Q4_K, DType::Q6_K}) {
    const QuantGemmLayout layout = quant_gemm_layout(type);
    const int64_t n = 3 * 256;
    std::vector<float> x(static_cast<size_t>(n));
    for (float& v : x) v = dist(rng);
    x[300] = std::numeric_limits<float>::infinity();  // block 1 (K) or block 9 (32) is NaN
    const Activations want(type, x, n, 1, n);
    for (Isa isa : runnable_isas()) {
      std::vector<uint8_t> got(size_t(n / layout.block) * layout.activation_block_bytes() + 1, 0x5A);
      vec_kernels(isa).pack_quant_activations(type, n, x.data(), got.data());
      ASSERT_EQ(got.back(), 0x5A) << isa_name(isa) << " wrote past the row";
      for (int64_t b = 0; b < n / layout.block; ++b) {
        const uint8_t* record = got.data() + size_t(b) * layout.activation_block_bytes();
        const int8_t* want_q = layout.block == 256 ? want.q8k[size_t(b)].qs : want.q8_32[size_t(b)].qs;
        const float want_d = layout.block == 256 ? want.q8k[size_t(b)].d : want.q8_32[size_t(b)].d;
        ASSERT_EQ(std::memcmp(record, want_q, size_t(layout.block)), 0) << isa_name(isa) << " block " << b;
        float fields[1 + 16];
        std::memcpy(fields, record + layout.block, sizeof(float) * size_t(1 + layout.block / layout.group));
        if (layout.signed_quants) {
          int32_t sum;
          std::memcpy(&sum, &fields[1], sizeof sum);
          int32_t want_sum = 0;
          for (int i = 0; i < 32; ++i) want_sum += want_q[i];
          ASSERT_EQ(sum, want_sum) << isa_name(isa) << " block " << b;
          ASSERT_TRUE(std::isnan(want_d) ? std::isnan(fields[0]) : fields[0] == want_d)
              << isa_name(isa) << " block " << b;
          continue;
        }
        if (std::isnan(want_d)) {
          for (int g = 0; g <= layout.block / layout.group; ++g) EXPECT_TRUE(std::isnan(fields[g])) << b << " " << g;
          continue;
        }
        ASSERT_EQ(fields[0], want_d) << isa_name(isa) << " block " << b;
        for (int g = 0; g < layout.block / layout.group; ++g) {
          int32_t quants = 0;
          if (layout.block == 256) {  // q8_K's sums are per 16 elements
            for (int i = 0; i < layout.group / 16; ++i) quants += want.q8k[size_t(b)].bsums[g * layout.group / 16 + i];
          } else {
            for (int i = 0; i < layout.group; ++i) quants += want_q[g * layout.group + i];
          }
          const float want_sum = type == DType::Q4_1 ? want.q8_32[size_t(b)].s : want_d * float(quants);
          ASSERT_EQ(fields[1 + g], want_sum) << isa_name(isa) << " block " << b << " group " << g;
        }
      }
    }
  }
}

// The integer GEMM's tiles (pack_quant_panel, pack_quant_activations, quant_gemm_tiles) for
// every quantized type, with partial panels, rows of several panels and partial tiles: each
// output against the double sum, the rest of c untouched, accumulate adding onto c, and an output
// equal to the same row and token computed alone (tile independence, which graph replay's
// bit-identity rests on).
struct PackedPanels {
  std::vector<uint8_t> bytes;
  size_t stride;
};

PackedPanels pack_panels(const VecKernels& vec, DType type, int64_t n, int rows, const char* first_row,
                         size_t row_stride) {
  const QuantGemmLayout layout = quant_gemm_layout(type);
  const int lanes = vec.quant_panel_rows;
  PackedPanels panels{{}, size_t(n / layout.block) * layout.weight_block_bytes(lanes)};
  panels.bytes.resize(size_t((rows + lanes - 1) / lanes) * panels.stride);
  for (int r0 = 0; r0 < rows; r0 += lanes) {
    vec.pack_quant_panel(type, n, std::min(lanes, rows - r0), first_row + size_t(r0) * row_stride, row_stride,
                         panels.bytes.data() + size_t(r0 / lanes) * panels.stride);
  }
  return panels;
}

// One token's quantized rows after another, x_stride bytes apart.
struct PackedTokens {
  std::vector<uint8_t> bytes;
  size_t stride;
};

PackedTokens pack_tokens(const VecKernels& vec, DType type, const std::vector<float>& x, int64_t n, int64_t tokens) {
  const QuantGemmLayout layout = quant_gemm_layout(type);
  PackedTokens packed{{}, size_t(n / layout.block) * layout.activation_block_bytes()};
  packed.bytes.resize(size_t(tokens) * packed.stride);
  for (int64_t t = 0; t < tokens; ++t) {
    vec.pack_quant_activations(type, n, x.data() + t * n, packed.bytes.data() + size_t(t) * packed.stride);
  }
  return packed;
}

TEST(VecQuant, GemmTilesMatchDoubleReferenceOnEveryIsa) {
  test::Rng rng(25);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (DType type : kQuantTypes) {
    const QuantGemmLayout layout = quant_gemm_layout(type);
    for (int64_t blocks : {1, 3, 8}) {
      const int64_t n = blocks * layout.block;
      const QuantRows a(type, n, 40, rng);
      std::vector<std::vector<double>> offsets;
      for (int64_t j = 0; j < a.count; ++j)
        offsets.push_back(quant_offsets(type, a.bytes.data() + size_t(j) * a.stride, n));
      const int64_t max_tokens = kMaxQuantTileTokens;
      std::vector<float> x(size_t(max_tokens * n));
      for (float& v : x) v = dist(rng);
      const Activations xa(type, x, n, max_tokens, n);
      for (Isa isa : runnable_isas()) {
        const VecKernels& vec = vec_kernels(isa);
        const int lanes = vec.quant_panel_rows, tile = vec.quant_tile_tokens;
        const PackedTokens acts = pack_tokens(vec, type, x, n, max_tokens);
        for (int rows : {1, lanes - 1, lanes, 2 * lanes + 3}) {
          if (rows < 1) continue;
          const PackedPanels panels = pack_panels(vec, type, n, rows, a.bytes.data(), a.stride);
          for (int tokens : {1, tile - 1, tile}) {
            if (tokens < 1) continue;
            const int64_t ldc = rows + 3;
            std::vector<float> c(size_t(tile * ldc), -7.0f);
            vec.quant_gemm_tiles(layout, n, panels.bytes.data(), panels.stride, rows, tokens, acts.bytes.data(),
                                 acts.stride, c.data(), ldc, false);
            const std::vector<float> first = c;
            vec.quant_gemm_tiles(layout, n, panels.bytes.data(), panels.stride, rows, tokens, acts.bytes.data(),
                                 acts.stride, c.data(), ldc, true);
            for (int t = 0; t < tile; ++t) {
              for (int64_t j = 0; j < ldc; ++j) {
                const size_t at = size_t(t * ldc + j);
                if (t >= tokens || j >= rows) {
                  ASSERT_EQ(c[at], -7.0f) << isa_name(isa) << " wrote outside the tile: token " << t << " row " << j;
                  continue;
                }
                const ReferenceDot ref =
                    reference_dot(a, j, xa.values.data() + t * n, offsets[size_t(j)], offset_sums(xa, t));
                ASSERT_NEAR(first[at], ref.want, ref.bound)
                    << dtype_name(type) << " " << isa_name(isa) << " n=" << n << " rows=" << rows
                    << " tokens=" << tokens << " row " << j << " token " << t;
                ASSERT_EQ(c[at], 2.0f * first[at]) << isa_name(isa) << " accumulate";
                if (tokens == tile && (j == 0 || j == rows - 1)) {
                  const PackedPanels alone_panel =
                      pack_panels(vec, type, n, 1, a.bytes.data() + size_t(j) * a.stride, a.stride);
                  float alone = -7.0f;
                  vec.quant_gemm_tiles(layout, n, alone_panel.bytes.data(), alone_panel.stride, 1, 1,
                                       acts.bytes.data() + size_t(t) * acts.stride, acts.stride, &alone, 1, false);
                  ASSERT_EQ(alone, first[at])
                      << dtype_name(type) << " " << isa_name(isa) << " row " << j << " token " << t;
                }
              }
            }
          }
        }
      }
    }
  }
}

// The AMX table folds each block's integer sums as the AVX512_VNNI table does, in the same
// order: the same bits, on random quants and on every type's largest ones.
TEST(VecQuant, AmxTilesEqualVnniTilesBitForBit) {
  if (best_isa() < Isa::AMX) GTEST_SKIP() << "this CPU has no AMX-INT8 (or the OS did not grant the tile state)";
  const VecKernels &amx = vec_kernels(Isa::AMX), &vnni = vec_kernels(Isa::AVX512_VNNI);
  ASSERT_EQ(amx.quant_panel_rows, vnni.quant_panel_rows);
  test::Rng rng(29);
  std::uniform_real_distribution<float> dist(-3.0f, 3.0f);
  for (DType type : kQuantTypes) {
    const QuantGemmLayout layout = quant_gemm_layout(type);
    for (int64_t blocks : {1, 2, 5, 9}) {
      const int64_t n = blocks * layout.block;
      for (bool largest : {false, true}) {
        QuantRows a(type, n, 37, rng);
        if (largest) {
          // Every quant bit set, steps 1 (mins 0), q6_K's scales 127.
          std::fill(a.bytes.begin(), a.bytes.end(), char(0xFF));
          const std::vector<size_t> fields = f16_fields(type);
          const f16 one = f32_to_f16(1.0f), zero = f32_to_f16(0.0f);
          for (size_t at = 0; at + a.block_bytes <= a.bytes.size(); at += a.block_bytes) {
            std::memcpy(&a.bytes[at + fields[0]], &one, sizeof one);
            if (fields.size() > 1) std::memcpy(&a.bytes[at + fields[1]], &zero, sizeof zero);
            if (type == DType::Q6_K) std::memset(&a.bytes[at + offsetof(BlockQ6_K, scales)], 127, 16);
          }
        }
        std::vector<float> x(size_t(kMaxQuantTileTokens * n));
        for (float& v : x) v = largest ? 1.0f : dist(rng);
        const PackedTokens acts = pack_tokens(amx, type, x, n, kMaxQuantTileTokens);
        const PackedPanels panels = pack_panels(amx, type, n, int(a.count), a.bytes.data(), a.stride);
        for (int tokens : {1, 7, 9, 16}) {
          std::vector<float> want(size_t(tokens * a.count)), got(want.size());
          for (int t0 = 0; t0 < tokens; t0 += vnni.quant_tile_tokens) {
            vnni.quant_gemm_tiles(layout, n, panels.bytes.data(), panels.stride, int(a.count),
                                  std::min(vnni.quant_tile_tokens, tokens - t0),
                                  acts.bytes.data() + size_t(t0) * acts.stride, acts.stride, want.data() + t0 * a.count,
                                  a.count, false);
          }
          amx.quant_gemm_tiles(layout, n, panels.bytes.data(), panels.stride, int(a.count), tokens, acts.bytes.data(),
                               acts.stride, got.data(), a.count, false);
          for (size_t i = 0; i < want.size(); ++i) {
            ASSERT_EQ(got[i], want[i]) << dtype_name(type) << " n=" << n << " tokens=" << tokens
                                       << " largest=" << largest << " token " << i / size_t(a.count) << " row "
                                       << i % size_t(a.count);
          }
        }
      }
    }
  }
}

// q8_0's extreme quants against the largest activations, where a product of unsigned weights
// (q + 128) by signed activations would overflow maddubs's int16 pairs: -128 and 127 against
// +-127 (activations of +-127 quantize to themselves with d = 1), in the matrix-vector kernel and
// the GEMM tile, exact on every ISA.
TEST(VecQuant, Q8_0ExtremeQuantsSumExactlyOnEveryIsa) {
  constexpr int64_t kN = 64, kRows = 3;
  std::vector<BlockQ8_0> rows(size_t(kRows * kN / 32));
  const int8_t patterns[kRows][2] = {{-128, -128}, {127, 127}, {-128, 127}};
  for (int64_t r = 0; r < kRows; ++r) {
    for (int64_t b = 0; b < kN / 32; ++b) {
      BlockQ8_0& block = rows[size_t(r * kN / 32 + b)];
      block.d = f32_to_f16(1.0f);
      for (int i = 0; i < 32; ++i) block.qs[i] = patterns[r][i % 2];
    }
  }
  std::vector<float> x(static_cast<size_t>(kN));
  for (int64_t i = 0; i < kN; ++i) x[size_t(i)] = i % 3 == 0 ? -127.0f : 127.0f;
  std::vector<double> want(static_cast<size_t>(kRows), 0.0);
  for (int64_t r = 0; r < kRows; ++r) {
    for (int64_t i = 0; i < kN; ++i) want[size_t(r)] += double(patterns[r][i % 2]) * x[size_t(i)];
  }
  const Activations xa(DType::Q8_0, x, kN, 1, kN);
  const QuantGemmLayout layout = quant_gemm_layout(DType::Q8_0);
  for (Isa isa : runnable_isas()) {
    const VecKernels& vec = vec_kernels(isa);
    std::vector<float> out(static_cast<size_t>(kRows));
    xa.dot(vec, kRows, reinterpret_cast<const char*>(rows.data()), kN / 32 * sizeof(BlockQ8_0), 0, 1, out.data(), 1);
    std::vector<uint8_t> panel(size_t(kN / 32) * layout.weight_block_bytes(vec.quant_panel_rows));
    std::vector<uint8_t> acts(size_t(kN / 32) * layout.activation_block_bytes());
    vec.pack_quant_panel(DType::Q8_0, kN, kRows, rows.data(), kN / 32 * sizeof(BlockQ8_0), panel.data());
    vec.pack_quant_activations(DType::Q8_0, kN, x.data(), acts.data());
    std::vector<float> tile(size_t(vec.quant_panel_rows));
    vec.quant_gemm_tiles(layout, kN, panel.data(), panel.size(), kRows, 1, acts.data(), acts.size(), tile.data(),
                         vec.quant_panel_rows, false);
    for (int64_t r = 0; r < kRows; ++r) {
      EXPECT_EQ(out[size_t(r)], float(want[size_t(r)])) << isa_name(isa) << " mat-vec row " << r;
      EXPECT_EQ(tile[size_t(r)], float(want[size_t(r)])) << isa_name(isa) << " GEMM row " << r;
    }
  }
}

// Every unsigned type's largest quants (all bits set, the K types' 6-bit scales 63, q6_K's
// scales 127) against activations that all quantize to 127: the largest sums the kernels add in
// int16 before widening them (QuantGemmLayout::int16_steps, the row-pair dot of q4_0..q5_1), in
// the matrix-vector kernel and the GEMM tile on every ISA.
TEST(VecQuant, LargestUnsignedQuantsSumWithoutOverflowOnEveryIsa) {
  for (DType type : kQuantTypes) {
    if (type == DType::Q8_0) continue;  // Q8_0ExtremeQuantsSumExactlyOnEveryIsa
    const QuantGemmLayout layout = quant_gemm_layout(type);
    const int64_t n = 2 * layout.block, rows = 3;
    const size_t block_bytes = dtype_traits(type).type_size, row_bytes = size_t(n / layout.block) * block_bytes;
    std::vector<char> bytes(size_t(rows) * row_bytes, char(0xFF));
    for (size_t at = 0; at < bytes.size(); at += block_bytes) {
      const std::vector<size_t> fields = f16_fields(type);
      const f16 one = f32_to_f16(1.0f), zero = f32_to_f16(0.0f);
      std::memcpy(&bytes[at + fields[0]], &one, sizeof one);
      if (fields.size() > 1) std::memcpy(&bytes[at + fields[1]], &zero, sizeof zero);  // m, dmin
      if (type == DType::Q6_K) std::memset(&bytes[at + offsetof(BlockQ6_K, scales)], 127, 16);
    }
    const std::vector<float> x(static_cast<size_t>(n), 1.0f);
    const Activations xa(type, x, n, 1, n);
    std::vector<float> w(static_cast<size_t>(n));
    row_to_f32(type, bytes.data(), w.data(), n);
    double want = 0.0;
    for (int64_t i = 0; i < n; ++i) want += double(w[size_t(i)]) * xa.values[size_t(i)];
    for (Isa isa : runnable_isas()) {
      const VecKernels& vec = vec_kernels(isa);
      std::vector<float> out(static_cast<size_t>(rows));
      xa.dot(vec, rows, bytes.data(), row_bytes, 0, 1, out.data(), 1);
      std::vector<uint8_t> panel(size_t(n / layout.block) * layout.weight_block_bytes(vec.quant_panel_rows));
      std::vector<uint8_t> acts(size_t(n / layout.block) * layout.activation_block_bytes());
      vec.pack_quant_panel(type, n, int(rows), bytes.data(), row_bytes, panel.data());
      vec.pack_quant_activations(type, n, x.data(), acts.data());
      std::vector<float> tile(size_t(vec.quant_panel_rows));
      vec.quant_gemm_tiles(layout, n, panel.data(), panel.size(), int(rows), 1, acts.data(), acts.size(), tile.data(),
                           vec.quant_panel_rows, false);
      for (int64_t r = 0; r < rows; ++r) {
        EXPECT_NEAR(out[size_t(r)], want, 1e-6 * std::abs(want))
            << dtype_name(type) << " " << isa_name(isa) << " mat-vec row " << r;
        EXPECT_NEAR(tile[size_t(r)], want, 1e-6 * std::abs(want))
            << dtype_name(type) << " " << isa_name(isa) << " GEMM row " << r;
      }
    }
  }
}

// ---- interleaved rows (interleaved_rows.h: the decode copies of q4_0 and q8_0 matrices) ----

// dot_interleaved_rows over the copy of `rows` rows of a, on `vec`; `out` padded past them.
std::vector<float> dot_interleaved(const VecKernels& vec, const QuantRows& a, int64_t rows, const Activations& xa) {
  std::vector<uint8_t> groups(interleaved_bytes(a.type, a.n, rows));
  interleave_rows(a.type, a.n, rows, a.bytes.data(), a.stride, groups.data());
  std::vector<float> out(size_t(rows + 5), -7.0f);
  vec.dot_interleaved_rows(a.type, a.n, rows, groups.data(), xa.blocks(), out.data(),
                           xa.dot_scratch.bytes(dot_q8_32_scratch_bytes(a.n, 1)));
  return out;
}

const DType kInterleavedTypes[] = {DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1,
                                   DType::Q8_0, DType::Q4_K, DType::Q5_K, DType::Q6_K};

TEST(VecQuant, InterleavedRowsMatchDoubleReferenceAndEachOtherOnEveryIsa) {
  test::Rng rng(27);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (DType type : kInterleavedTypes) {
    for (int64_t blocks : {1, 2, 3, 7, 13, 64}) {
      const int64_t n = int64_t(dtype_traits(type).block_size) * blocks;
      const QuantRows a(type, n, 47, rng);
      std::vector<float> x(static_cast<size_t>(n));
      for (float& v : x) v = dist(rng);
      const Activations xa(type, x, n, 1, n);
      for (int64_t rows : {1, 2, 15, 16, 17, 31, 32, 33, 47}) {
        const std::vector<float> want = dot_interleaved(vec_kernels(Isa::SCALAR), a, rows, xa);
        for (Isa isa : runnable_isas()) {
          const std::vector<float> got = dot_interleaved(vec_kernels(isa), a, rows, xa);
          for (int64_t j = 0; j < rows + 5; ++j) {
            if (j >= rows) {
              ASSERT_EQ(got[size_t(j)], -7.0f) << isa_name(isa) << " wrote past row " << rows;
              continue;
            }
            const ReferenceDot ref =
                reference_dot(a, j, xa.values.data(), quant_offsets(type, a.bytes.data() + size_t(j) * a.stride, n),
                              offset_sums(xa, 0));
            ASSERT_NEAR(got[size_t(j)], ref.want, ref.bound)
                << dtype_name(type) << " " << isa_name(isa) << " n=" << n << " rows=" << rows << " row " << j;
            // One lane per row: every table sums a row the same way.
            ASSERT_EQ(std::bit_cast<uint32_t>(got[size_t(j)]), std::bit_cast<uint32_t>(want[size_t(j)]))
                << dtype_name(type) << " " << isa_name(isa) << " n=" << n << " row " << j << " vs the scalar table";
          }
        }
      }
    }
  }
}

// Groups laid out apart (as threads do, prepared_weights.cpp) give the whole layout's bytes.
TEST(VecQuant, InterleavedGroupsLaidOutApartEqualTheWhole) {
  test::Rng rng(28);
  for (DType type : kInterleavedTypes) {
    const int64_t n = 3 * int64_t(dtype_traits(type).block_size), rows = 53;  // 4 groups, the last of 5 rows
    const QuantRows a(type, n, rows, rng);
    std::vector<uint8_t> whole(interleaved_bytes(type, n, rows)), apart(whole.size(), 0xAB);
    interleave_rows(type, n, rows, a.bytes.data(), a.stride, whole.data());
    for (const auto& [first, end] : {std::pair<int64_t, int64_t>{2, 4}, {0, 1}, {1, 2}}) {
      interleave_groups(type, n, rows, a.bytes.data(), a.stride, first, end, apart.data());
    }
    EXPECT_EQ(apart, whole) << dtype_name(type);
  }
}

// The extremes the unsigned products take back: q4_0..q5_1's largest and smallest quants, q8_0's -128 and 127,
// q4_K's and q5_K's largest quants, scales and mins (all bits set), q6_K's quants 63 and 0 under scales of
// 127 and -128, against activations of 127 and -127.
TEST(VecQuant, InterleavedExtremeQuantsSumExactlyOnEveryIsa) {
  constexpr int64_t kRows = 18;
  for (DType type : kInterleavedTypes) {
    const int64_t n = 2 * int64_t(dtype_traits(type).block_size);
    const size_t block_bytes = dtype_traits(type).type_size, row_bytes = 2 * block_bytes;
    std::vector<char> bytes(size_t(kRows) * row_bytes);
    for (int64_t r = 0; r < kRows; ++r) {
      for (int64_t b = 0; b < 2; ++b) {
        char* blk = bytes.data() + size_t(r) * row_bytes + size_t(b) * block_bytes;
        // Rows alternate between all-largest, all-smallest and mixed quants.
        const uint8_t q4[3] = {0xFF, 0x00, 0xF0};
        const int8_t q8[3] = {127, -128, -128};
        for (size_t i = 2; i < block_bytes; ++i) {
          blk[i] = type == DType::Q8_0 ? char(r % 3 == 2 && i % 2 ? 127 : q8[r % 3]) : char(q4[r % 3]);
        }
        const f16 one = f32_to_f16(1.0f), half = f32_to_f16(0.5f);
        std::memcpy(blk, &one, sizeof one);
        if (type == DType::Q4_1 || type == DType::Q5_1) std::memcpy(blk + 2, &half, sizeof half);  // m
        if (type == DType::Q4_K || type == DType::Q5_K) {
          std::memcpy(blk + 2, &half, sizeof half);  // dmin
          std::memset(blk + 4, 0xFF, 12);            // scales and mins 63
        }
        if (type == DType::Q6_K) {
          std::memset(blk + offsetof(BlockQ6_K, scales), r % 2 ? -128 : 127, 16);
          std::memcpy(blk + offsetof(BlockQ6_K, d), &one, sizeof one);
        }
      }
    }
    std::vector<float> x(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) x[size_t(i)] = i % 3 == 0 ? -127.0f : 127.0f;
    const Activations xa(type, x, n, 1, n);
    std::vector<float> w(static_cast<size_t>(n));
    std::vector<uint8_t> groups(interleaved_bytes(type, n, kRows));
    interleave_rows(type, n, kRows, bytes.data(), row_bytes, groups.data());
    for (Isa isa : runnable_isas()) {
      std::vector<float> out(static_cast<size_t>(kRows));
      vec_kernels(isa).dot_interleaved_rows(type, n, kRows, groups.data(), xa.blocks(), out.data(),
                                            xa.dot_scratch.bytes(dot_q8_32_scratch_bytes(n, 1)));
      for (int64_t r = 0; r < kRows; ++r) {
        row_to_f32(type, bytes.data() + size_t(r) * row_bytes, w.data(), n);
        double want = 0.0;
        for (int64_t i = 0; i < n; ++i) want += double(w[size_t(i)]) * xa.values[size_t(i)];
        EXPECT_EQ(out[size_t(r)], float(want)) << dtype_name(type) << " " << isa_name(isa) << " row " << r;
      }
    }
  }
}

TEST(VecQuant, RefusesTypesOfTheOtherKernels) {
  float out[32];
  const float in[32] = {};
  EXPECT_THROW(vec_kernels(Isa::SCALAR).dequantize(DType::F32, 32, out, in), Error);
  const BlockQ4_0 q4_block{};
  const BlockQ8_0 q8_block{};
  BlockQ8_K k_activations{};
  BlockQ8_32 activations{};
  for (Isa isa : runnable_isas()) {
    const VecKernels& vec = vec_kernels(isa);
    try {
      vec.dot_q8k_rows(DType::Q4_0, 256, 1, &q4_block, sizeof q4_block, 1, &k_activations, 1, out, 1, 1);
      FAIL() << "q4_0 takes q8_32 activations";
    } catch (const Error& e) {
      EXPECT_STREQ(e.what(), "cpu: dot_q8k_rows does not take q4_0");
    }
    EXPECT_THROW(vec.dot_q8k_rows(DType::Q8_0, 256, 1, &q8_block, sizeof q8_block, 1, &k_activations, 1, out, 1, 1),
                 Error);
    EXPECT_THROW(
        vec.dot_q8_32_rows(DType::Q4_K, 256, 1, &q8_block, sizeof q8_block, 1, &activations, 8, out, 1, 1, nullptr),
        Error);
    const uint8_t groups[64] = {};
    int32_t scratch[8];
    EXPECT_THROW(vec.dot_interleaved_rows(DType::F16, 32, 1, groups, &activations, out, scratch), Error);
    const uint16_t f16_row[32] = {};
    uint8_t panel[64];
    try {
      vec.pack_quant_panel(DType::F16, 32, 1, f16_row, sizeof f16_row, panel);
      FAIL() << "f16 has no integer GEMM";
    } catch (const Error& e) {
      EXPECT_STREQ(e.what(), "cpu: the integer GEMM does not take f16");
    }
  }
}

}  // namespace
}  // namespace tg::cpu
