// mul_mat: r[m, n] = sum_k a[k, m] * b[k, n], a broadcast over b's batch dims: the fallback for
// what the GEMM (kernels_matmul_gemm.cpp) does not take, above all quantized weights.
//
// Two paths. Matrix-vector (N == 1, decode; for quantized a up to kMaxQuantTokens) is bound by
// reading a once: dot products of rows of a straight from their storage against every column of b
// (f16/bf16 converted in registers; quantized blocks multiplied as integers by b quantized to 8
// bits, which quant.h makes part of mul_mat's result). Matrix-matrix is a blocked GEMM in the
// GotoBLAS shape: b is packed once per node; each work item takes 128 columns of a, packs them
// into panels of NR columns one K block at a time, and runs a register-blocked micro-kernel over
// every MR x NR block against all of b. For f32, f16 and bf16 the panels are f32 and the
// micro-kernel FMAs; quantized types keep their quants as bytes, b quantized to 8 bits, and
// multiply as integers (quant_gemm).
#include <algorithm>
#include <atomic>
#include <cstring>
#include <type_traits>

#include "cpu/kernels.h"
#include "cpu/row_io.h"
#include "cpu/simd.h"

namespace tg::cpu {

namespace {

// c[i * ldc + j] (+)= sum_k x[k * mr + i] * w[k * nr + j] for the kernel's fixed mr x nr block.
using MicroKernel = void (*)(int64_t kc, const float* x, const float* w, float* c, int64_t ldc,
                             bool accumulate);

struct GemmShape {
  int mr;  // output rows (n) per micro block: broadcast from the packed b panel
  int nr;  // output columns (m) per micro block: vector loads from the packed a panel
  MicroKernel micro;
};

constexpr int kMaxMr = 12;
constexpr int kMaxNr = 32;

// 12 x 32: 24 accumulators, 2 weight vectors and a broadcast fill 27 of the 32 zmm registers.
__attribute__((target(TG_TARGET_AVX512))) void micro_avx512(int64_t kc, const float* x,
                                                            const float* w, float* c, int64_t ldc,
                                                            bool accumulate) {
  constexpr int kMr = 12;
  __m512 acc[kMr][2];
#pragma GCC unroll 12
  for (int i = 0; i < kMr; ++i) acc[i][0] = acc[i][1] = _mm512_setzero_ps();
  for (int64_t k = 0; k < kc; ++k, x += kMr, w += 32) {
    const __m512 w0 = _mm512_loadu_ps(w);
    const __m512 w1 = _mm512_loadu_ps(w + 16);
#pragma GCC unroll 12
    for (int i = 0; i < kMr; ++i) {
      const __m512 xi = _mm512_set1_ps(x[i]);
      acc[i][0] = _mm512_fmadd_ps(xi, w0, acc[i][0]);
      acc[i][1] = _mm512_fmadd_ps(xi, w1, acc[i][1]);
    }
  }
#pragma GCC unroll 12
  for (int i = 0; i < kMr; ++i) {
    float* row = c + i * ldc;
    if (accumulate) {
      acc[i][0] = _mm512_add_ps(acc[i][0], _mm512_loadu_ps(row));
      acc[i][1] = _mm512_add_ps(acc[i][1], _mm512_loadu_ps(row + 16));
    }
    _mm512_storeu_ps(row, acc[i][0]);
    _mm512_storeu_ps(row + 16, acc[i][1]);
  }
}

// 6 x 16: 12 accumulators, 2 weight vectors and a broadcast fill 15 of the 16 ymm registers.
__attribute__((target(TG_TARGET_AVX2))) void micro_avx2(int64_t kc, const float* x, const float* w,
                                                        float* c, int64_t ldc, bool accumulate) {
  constexpr int kMr = 6;
  __m256 acc[kMr][2];
#pragma GCC unroll 6
  for (int i = 0; i < kMr; ++i) acc[i][0] = acc[i][1] = _mm256_setzero_ps();
  for (int64_t k = 0; k < kc; ++k, x += kMr, w += 16) {
    const __m256 w0 = _mm256_loadu_ps(w);
    const __m256 w1 = _mm256_loadu_ps(w + 8);
#pragma GCC unroll 6
    for (int i = 0; i < kMr; ++i) {
      const __m256 xi = _mm256_broadcast_ss(x + i);
      acc[i][0] = _mm256_fmadd_ps(xi, w0, acc[i][0]);
      acc[i][1] = _mm256_fmadd_ps(xi, w1, acc[i][1]);
    }
  }
#pragma GCC unroll 6
  for (int i = 0; i < kMr; ++i) {
    float* row = c + i * ldc;
    if (accumulate) {
      acc[i][0] = _mm256_add_ps(acc[i][0], _mm256_loadu_ps(row));
      acc[i][1] = _mm256_add_ps(acc[i][1], _mm256_loadu_ps(row + 8));
    }
    _mm256_storeu_ps(row, acc[i][0]);
    _mm256_storeu_ps(row + 8, acc[i][1]);
  }
}

// 4 x 8 in plain C++ (SSE2 at best, from the auto-vectoriser).
void micro_scalar(int64_t kc, const float* x, const float* w, float* c, int64_t ldc,
                  bool accumulate) {
  constexpr int kMr = 4, kNr = 8;
  float acc[kMr][kNr] = {};
  for (int64_t k = 0; k < kc; ++k, x += kMr, w += kNr) {
    for (int i = 0; i < kMr; ++i) {
      for (int j = 0; j < kNr; ++j) acc[i][j] += x[i] * w[j];
    }
  }
  for (int i = 0; i < kMr; ++i) {
    for (int j = 0; j < kNr; ++j)
      c[i * ldc + j] = accumulate ? c[i * ldc + j] + acc[i][j] : acc[i][j];
  }
}

GemmShape gemm_shape(Isa isa) {
  switch (isa) {
    case Isa::AVX512:
    case Isa::AVX512_VNNI:
    case Isa::AVX512_BF16: return {12, 32, micro_avx512};
    case Isa::AVX2: return {6, 16, micro_avx2};
    case Isa::SCALAR: break;
  }
  return {4, 8, micro_scalar};
}

// Depth of one packed block: an a panel (256 x 32 floats, 32 KiB) and a b panel (12 KiB) stay in
// L1/L2 while a micro-kernel call streams them. A multiple of 256, so no quantized block straddles
// two K blocks of the integer GEMM.
constexpr int64_t kBlockK = 256;
// Columns of a per work item: its packed panels (128 KiB) stay in L2 while all of b streams by.
constexpr int64_t kTileM = 128;
// When there are fewer column tiles than threads, b's rows are split too, but into chunks of at
// least this many rows so that packing a stays cheap next to the arithmetic.
constexpr int64_t kMinChunkN = 64;

// The activation formats (quant.h) as the vector tables quantize them.
void quantize_activations(const VecKernels& vec, int64_t n, BlockQ8_K* y, const float* x) {
  vec.quantize_q8k(n, y, x);
}
void quantize_activations(const VecKernels& vec, int64_t n, BlockQ8_32* y, const float* x) {
  vec.quantize_q8_32(n, y, x);
}

// The activations b as mul_mat multiplies weights of `weight_type` by them (quant.h): as they
// are, or rounded to bf16 for bf16 weights. Row (i1, i2, i3) into buf (b.ne[0] floats), or the
// row itself when it needs no change; `bits` holds b.ne[0] values for the rounding.
const float* read_activation_row(const VecKernels& vec, DType weight_type, const Tensor& b, int64_t i1, int64_t i2,
                                 int64_t i3, float* buf, uint16_t* bits) {
  if (activation_type(weight_type) != ActivationType::BF16) return read_row_f32(vec, b, i1, i2, i3, buf);
  vec.f32_to_bf16(b.ne[0], bits, read_row_f32(vec, b, i1, i2, i3, buf));
  vec.bf16_to_f32(b.ne[0], buf, bits);
  return buf;
}

// b's rows as contiguous f32 activations of weights of `weight_type`: in place when they already
// are, else converted once per node into shared scratch (laid out contiguously as [K, N, B2, B3]).
class FloatRows {
 public:
  FloatRows(const Tensor& b, DType weight_type, ExecContext& exec) : b_(b) {
    const bool rounds = activation_type(weight_type) == ActivationType::BF16;
    if (b.type == DType::F32 && b.nb[0] == sizeof(float) && b.nb[1] % sizeof(float) == 0 && !rounds) return;
    const int64_t k = b.ne[0];
    converted_ = static_cast<float*>(exec.shared_scratch(size_t(b.nelements()) * sizeof(float)));
    const VecKernels& vec = exec.vec();
    exec.parallel_range(b.nrows(), k, [&](const ThreadContext& tc, int64_t begin, int64_t end) {
      auto* bits = static_cast<uint16_t*>(tc.scratch.bytes(size_t(k) * sizeof(uint16_t)));
      int64_t r = begin;
      for_each_row(b, begin, end, [&](int64_t i1, int64_t i2, int64_t i3) {
        float* row = converted_ + r++ * k;
        if (const float* x = read_activation_row(vec, weight_type, b, i1, i2, i3, row, bits); x != row) {
          std::copy_n(x, k, row);
        }
      });
    });
  }

  const float* row(int64_t n, int64_t i2, int64_t i3) const {
    if (!converted_) return reinterpret_cast<const float*>(row_ptr(b_, n, i2, i3));
    return converted_ + ((i3 * b_.ne[2] + i2) * b_.ne[1] + n) * b_.ne[0];
  }
  // Floats from row n to row n + 1 of one batch.
  int64_t row_stride() const {
    return converted_ ? b_.ne[0] : int64_t(b_.nb[1] / sizeof(float));
  }

 private:
  const Tensor& b_;
  float* converted_ = nullptr;
};

// b's rows, each read as f32 and quantized once per node by quantize(k, x, out) into
// `row_bytes` of shared scratch, laid out [B3, B2, N]: the 8-bit activations of quantized
// weights, in the matrix-vector path's format (Int8Rows) or the GEMM's (QuantActivationRows).
template <class Quantize>
uint8_t* quantize_rows(const Tensor& b, size_t row_bytes, ExecContext& exec, Quantize quantize) {
  auto* data = static_cast<uint8_t*>(exec.shared_scratch(size_t(b.nrows()) * row_bytes));
  convert_rows(b, data, row_bytes, exec, quantize);
  return data;
}

// b's rows in an 8-bit activation format (BlockQ8_K or BlockQ8_32), [K / block, N, B2, B3]
// blocks: the matrix-vector path of quantized weights.
template <class Block>
class Int8Rows {
 public:
  Int8Rows(const Tensor& b, ExecContext& exec) : b_(b), blocks_(b.ne[0] / int64_t(sizeof(Block::qs))) {
    const VecKernels& vec = exec.vec();
    data_ = reinterpret_cast<Block*>(
        quantize_rows(b, size_t(blocks_) * sizeof(Block), exec, [&](int64_t k, const float* x, uint8_t* out) {
          quantize_activations(vec, k, reinterpret_cast<Block*>(out), x);
        }));
  }

  const Block* row(int64_t n, int64_t i2, int64_t i3) const {
    return data_ + ((i3 * b_.ne[2] + i2) * b_.ne[1] + n) * blocks_;
  }
  // Blocks from row n to row n + 1 of one batch.
  int64_t row_stride() const { return blocks_; }

 private:
  const Tensor& b_;
  int64_t blocks_;
  Block* data_;
};

// Which matrix of a serves b's batch (i2, i3).
struct Broadcast {
  int64_t r2, r3;
  Broadcast(const Tensor& a, const Tensor& b) : r2(b.ne[2] / a.ne[2]), r3(b.ne[3] / a.ne[3]) {}
};

float* output_at(const Tensor& node, int64_t m, int64_t n, int64_t i2, int64_t i3) {
  return reinterpret_cast<float*>(row_ptr(node, n, i2, i3) + m * int64_t(node.nb[0]));
}

// Columns of b up to which quantized weights take mat_vec, which reads a once: decode and small
// batches. The integer GEMM, which unpacks every weight into a panel first, is 2-6x slower at 2
// and 4 tokens, 1.6x slower (K types) to 1.2x faster (q4_0, q8_0) at 8 and 2.5x faster from a
// few dozen (bench/RESULTS.md, ops).
constexpr int64_t kMaxQuantTokens = 8;

bool takes_mat_vec(const Tensor& a, const Tensor& b) {
  if (b.ne[1] == 1) return true;
  return is_quantized(a.type) && a.nb[0] == dtype_traits(a.type).type_size &&
         b.ne[1] <= kMaxQuantTokens;
}

// One dot product per row of a and column of b (several columns: quantized a with contiguous
// blocks only). x_rows: FloatRows, or Int8Rows for the types that take 8-bit activations.
template <class Rows>
void mat_vec(const Tensor& node, const Tensor& a, const Rows& x_rows, ExecContext& exec) {
  const VecKernels& vec = exec.vec();
  const int64_t k = a.ne[0], m_len = a.ne[1], tokens = node.ne[1];
  const int64_t batches = node.ne[2] * node.ne[3];
  const int64_t out_stride = int64_t(node.nb[1] / sizeof(float));
  const Broadcast bc(a, *node.src[1]);
  const bool direct = a.nb[0] == dtype_traits(a.type).type_size;
  exec.parallel_range(m_len * batches, k, [&](const ThreadContext& tc, int64_t begin, int64_t end) {
    float* buf = direct ? nullptr : tc.scratch.floats(size_t(k));
    // Runs of consecutive rows of a within one batch, each written to consecutive outputs.
    for (int64_t r = begin; r < end;) {
      const int64_t m = r % m_len, i2 = r / m_len % node.ne[2], i3 = r / m_len / node.ne[2];
      const int64_t count = std::min(end - r, m_len - m);
      const auto* x = x_rows.row(0, i2, i3);
      const char* rows = row_ptr(a, m, i2 / bc.r2, i3 / bc.r3);
      const int64_t stride = int64_t(a.nb[1]);
      float* out = output_at(node, m, 0, i2, i3);
      if constexpr (std::is_same_v<Rows, Int8Rows<BlockQ8_K>>) {
        vec.dot_q8k_rows(a.type, k, count, rows, a.nb[1], tokens, x, x_rows.row_stride(), out,
                         out_stride);
      } else if constexpr (std::is_same_v<Rows, Int8Rows<BlockQ8_32>>) {
        vec.dot_q8_32_rows(a.type, k, count, rows, a.nb[1], tokens, x, x_rows.row_stride(), out,
                           out_stride);
      } else if (!direct) {
        for (int64_t j = 0; j < count; ++j) {
          load_f32(vec, a.type, rows + j * stride, a.nb[0], k, buf);
          out[j] = vec.dot_f32(k, buf, x);
        }
      } else {
        vec.dot_rows(a.type, k, count, rows, a.nb[1], x, out);
      }
      r += count;
    }
  });
}

// Packs a[m0 .. m0+m_len)[k0 .. k0+kc) (one matrix of a) into panels of nr columns:
// panel p holds w[k * nr + j] = a[m0 + p nr + j][k0 + k], columns past m_len zero. `rows_buf`
// holds nr * kBlockK floats for rows that need converting to f32 first.
void pack_a(const VecKernels& vec, const Tensor& a, int64_t ia2, int64_t ia3, int64_t m0,
            int64_t m_len, int64_t k0, int64_t kc, int nr, float* panels, float* rows_buf) {
  const int64_t n_panels = (m_len + nr - 1) / nr;
  const bool transposed_f32 = a.type == DType::F32 && a.nb[1] == sizeof(float) && a.ne[1] > 1;
  const bool direct = a.type == DType::F32 && a.nb[0] == sizeof(float);
  const float* rows[kMaxNr];
  for (int64_t p = 0; p < n_panels; ++p) {
    float* panel = panels + p * kc * nr;
    const int64_t cols = std::min<int64_t>(nr, m_len - p * nr);
    if (cols < nr) std::fill(panel, panel + kc * nr, 0.0f);
    if (transposed_f32) {
      // Columns m adjacent in memory: copy a run of columns for each k.
      const char* base = row_ptr(a, m0 + p * nr, ia2, ia3);
      for (int64_t k = 0; k < kc; ++k) {
        std::memcpy(panel + k * nr, base + (k0 + k) * int64_t(a.nb[0]),
                    size_t(cols) * sizeof(float));
      }
      continue;
    }
    for (int64_t j = 0; j < cols; ++j) {
      const char* row = row_ptr(a, m0 + p * nr + j, ia2, ia3) + k0 * int64_t(a.nb[0]);
      if (direct) {
        rows[j] = reinterpret_cast<const float*>(row);
      } else {
        load_f32(vec, a.type, row, a.nb[0], kc, rows_buf + j * kBlockK);
        rows[j] = rows_buf + j * kBlockK;
      }
    }
    // Transpose in strips of 16 k: the strip's panel lines stay in L1 while every row of the
    // panel writes into them.
    constexpr int64_t kStrip = 16;
    for (int64_t ks = 0; ks < kc; ks += kStrip) {
      const int64_t len = std::min(kStrip, kc - ks);
      for (int64_t j = 0; j < cols; ++j) {
        const float* src = rows[j] + ks;
        // Each row is its own stream, too many for the hardware prefetcher to follow.
        __builtin_prefetch(src + 4 * kStrip);
        float* dst = panel + ks * nr + j;
        for (int64_t t = 0; t < len; ++t) dst[t * nr] = src[t];
      }
    }
  }
}

// b packed once per node into panels of mr rows for every K block: panel (batch, kb, q) holds
// x[k * mr + i] = b[q mr + i][kb kBlockK + k] of that batch (as read_activation_row reads it for
// weights of `weight_type`), rows past N zero.
class PackedB {
 public:
  PackedB(const Tensor& b, DType weight_type, int mr, ExecContext& exec)
      : k_blocks_((b.ne[0] + kBlockK - 1) / kBlockK),
        n_panels_((b.ne[1] + mr - 1) / mr),
        panel_floats_(kBlockK * mr) {
    const int64_t k_len = b.ne[0], n_len = b.ne[1];
    const int64_t batches = b.ne[2] * b.ne[3];
    data_ = static_cast<float*>(exec.shared_scratch(
        size_t(batches * k_blocks_ * n_panels_ * panel_floats_) * sizeof(float)));
    const VecKernels& vec = exec.vec();
    // One task item per (batch, row panel): each reads its mr rows of b once, whole.
    exec.parallel_range(batches * n_panels_, mr * k_len,
                        [&](const ThreadContext& tc, int64_t begin, int64_t end) {
                          float* row = tc.scratch.floats(size_t(k_len) * 3 / 2 + 1);
                          auto* bits = reinterpret_cast<uint16_t*>(row + k_len);
                          for (int64_t item = begin; item < end; ++item) {
                            const int64_t q = item % n_panels_, batch = item / n_panels_;
                            const int64_t i2 = batch % b.ne[2], i3 = batch / b.ne[2];
                            for (int64_t kb = 0; kb < k_blocks_; ++kb) {
                              std::fill_n(panel(batch, kb, q), panel_floats_, 0.0f);
                            }
                            for (int i = 0; i < mr && q * mr + i < n_len; ++i) {
                              const float* values =
                                  read_activation_row(vec, weight_type, b, q * mr + i, i2, i3, row, bits);
                              for (int64_t kb = 0; kb < k_blocks_; ++kb) {
                                float* column = panel(batch, kb, q) + i;
                                const int64_t k0 = kb * kBlockK, kc = std::min(kBlockK, k_len - k0);
                                for (int64_t k = 0; k < kc; ++k) column[k * mr] = values[k0 + k];
                              }
                            }
                          }
                        });
  }

  const float* panel(int64_t batch, int64_t kb, int64_t q) const {
    return data_ + ((batch * k_blocks_ + kb) * n_panels_ + q) * panel_floats_;
  }
  float* panel(int64_t batch, int64_t kb, int64_t q) {
    return data_ + ((batch * k_blocks_ + kb) * n_panels_ + q) * panel_floats_;
  }

 private:
  int64_t k_blocks_, n_panels_, panel_floats_;
  float* data_;
};

// How a GEMM of m_len columns of a against n_len rows of b (mr rows of b per micro-tile) is cut
// into work items: column tiles of kTileM, and when there are fewer of those than threads, b's
// rows too, into chunks of at least kMinChunkN rows so that packing a stays cheap next to the
// arithmetic.
struct GemmItems {
  int64_t m_tiles, n_panels, n_chunks, panels_per_chunk, count;

  GemmItems(int64_t m_len, int64_t n_len, int mr, int64_t batches, int max_threads)
      : m_tiles((m_len + kTileM - 1) / kTileM), n_panels((n_len + mr - 1) / mr) {
    const int64_t max_chunks = std::max<int64_t>(1, n_len / kMinChunkN);
    n_chunks = std::clamp<int64_t>(max_threads / (batches * m_tiles), 1, max_chunks);
    panels_per_chunk = (n_panels + n_chunks - 1) / n_chunks;
    count = batches * m_tiles * n_chunks;
  }
};

// One work item: batch `batch` (i2, i3) of the output, columns m0 .. m0 + m_count of a, panels
// q_begin .. q_end of b's rows.
struct GemmItem {
  int64_t batch, i2, i3, m0, m_count, q_begin, q_end;
};

// Runs fn(tc, item) for every item. Items are handed out one at a time, so a thread slowed by
// other work on a shared machine takes fewer of them.
template <class Fn>
void for_each_gemm_item(const Tensor& node, int64_t m_len, const GemmItems& items, ExecContext& exec, Fn fn) {
  std::atomic<int64_t> next_item{0};
  exec.parallel(int(std::min<int64_t>(items.count, exec.max_threads())), [&](const ThreadContext& tc) {
    for (int64_t i; (i = next_item.fetch_add(1, std::memory_order_relaxed)) < items.count;) {
      const int64_t chunk = i % items.n_chunks, tm = i / items.n_chunks % items.m_tiles,
                    batch = i / (items.n_chunks * items.m_tiles);
      const int64_t q_begin = chunk * items.panels_per_chunk;
      fn(tc, GemmItem{batch, batch % node.ne[2], batch / node.ne[2], tm * kTileM,
                      std::min(kTileM, m_len - tm * kTileM), q_begin,
                      std::min(items.n_panels, q_begin + items.panels_per_chunk)});
    }
  });
}

void gemm(const Tensor& node, const Tensor& a, const Tensor& b, ExecContext& exec) {
  const VecKernels& vec = exec.vec();
  const GemmShape shape = gemm_shape(vec.isa);
  const int mr = shape.mr, nr = shape.nr;
  const int64_t k_len = a.ne[0], m_len = a.ne[1], n_len = node.ne[1];
  const int64_t ldc = int64_t(node.nb[1] / sizeof(float));
  const int64_t batches = node.ne[2] * node.ne[3];
  const Broadcast bc(a, b);
  const PackedB packed_b(b, a.type, mr, exec);
  const GemmItems items(m_len, n_len, mr, batches, exec.max_threads());
  const int64_t a_panel_floats = (kTileM + nr - 1) / nr * nr * kBlockK;

  for_each_gemm_item(node, m_len, items, exec, [&](const ThreadContext& tc, const GemmItem& item) {
    float* a_panels =
        tc.scratch.floats(size_t(a_panel_floats + kMaxNr * kBlockK + kMaxMr * kMaxNr));
    float* rows_buf = a_panels + a_panel_floats;
    float* edge = rows_buf + kMaxNr * kBlockK;
    for (int64_t kb = 0; kb * kBlockK < k_len; ++kb) {
      const int64_t k0 = kb * kBlockK, kc = std::min(kBlockK, k_len - k0);
      const bool accumulate = kb > 0;
      pack_a(vec, a, item.i2 / bc.r2, item.i3 / bc.r3, item.m0, item.m_count, k0, kc, nr, a_panels,
             rows_buf);
      for (int64_t q = item.q_begin; q < item.q_end; ++q) {
        const float* x = packed_b.panel(item.batch, kb, q);
        const int64_t n = q * mr, rows = std::min<int64_t>(mr, n_len - n);
        for (int64_t m = 0; m < item.m_count; m += nr) {
          const float* w = a_panels + m / nr * kc * nr;
          const int64_t cols = std::min<int64_t>(nr, item.m_count - m);
          float* c = output_at(node, item.m0 + m, n, item.i2, item.i3);
          if (rows == mr && cols == nr) {
            shape.micro(kc, x, w, c, ldc, accumulate);
            continue;
          }
          // Edge block: compute all of it aside, keep the part inside the output.
          shape.micro(kc, x, w, edge, nr, false);
          for (int64_t i = 0; i < rows; ++i) {
            for (int64_t j = 0; j < cols; ++j) {
              c[i * ldc + j] = accumulate ? c[i * ldc + j] + edge[i * nr + j] : edge[i * nr + j];
            }
          }
        }
      }
    }
  });
}

// b's rows in the integer GEMM's activation blocks for weights of `layout` (vec.h,
// QuantGemmLayout), laid out [B3, B2, N, K / block].
class QuantActivationRows {
 public:
  QuantActivationRows(const Tensor& b, DType weight_type, const QuantGemmLayout& layout, ExecContext& exec)
      : b_(b), row_bytes_(size_t(b.ne[0] / layout.block) * layout.activation_block_bytes()) {
    const VecKernels& vec = exec.vec();
    data_ = quantize_rows(b, row_bytes_, exec, [&](int64_t k, const float* x, uint8_t* out) {
      vec.pack_quant_activations(weight_type, k, x, out);
    });
  }

  const uint8_t* row(int64_t n, int64_t batch) const {
    return data_ + size_t(batch * b_.ne[1] + n) * row_bytes_;
  }

 private:
  const Tensor& b_;
  size_t row_bytes_;
  uint8_t* data_;
};

// Quantized types against more tokens than mat_vec takes: the GEMM's items and K blocks,
// with a's columns unpacked into integer panels (vec.h, pack_quant_panel) and b's rows quantized
// once (QuantActivationRows), multiplied as integers by quant_gemm_tile.
void quant_gemm(const Tensor& node, const Tensor& a, const Tensor& b, ExecContext& exec) {
  const VecKernels& vec = exec.vec();
  const QuantGemmLayout layout = quant_gemm_layout(a.type);
  const int mr = vec.quant_tile_tokens, nr = vec.quant_panel_rows;
  const int64_t k_len = a.ne[0], m_len = a.ne[1], n_len = node.ne[1];
  const int64_t ldc = int64_t(node.nb[1] / sizeof(float));
  const int64_t batches = node.ne[2] * node.ne[3];
  const Broadcast bc(a, b);
  const QuantActivationRows x_rows(b, a.type, layout, exec);
  const GemmItems items(m_len, n_len, mr, batches, exec.max_threads());
  const size_t panel_bytes = size_t(kBlockK / layout.block) * layout.weight_block_bytes(nr);
  const size_t block_bytes = dtype_traits(a.type).type_size;

  for_each_gemm_item(node, m_len, items, exec, [&](const ThreadContext& tc, const GemmItem& item) {
    const int64_t n_panels_a = (item.m_count + nr - 1) / nr;
    auto* panels = static_cast<uint8_t*>(tc.scratch.bytes(size_t(n_panels_a) * panel_bytes));
    const uint8_t* x[kMaxQuantTileTokens];
    for (int64_t kb = 0; kb * kBlockK < k_len; ++kb) {
      const int64_t k0 = kb * kBlockK, kc = std::min(kBlockK, k_len - k0);
      for (int64_t p = 0; p < n_panels_a; ++p) {
        const int64_t m = item.m0 + p * nr;
        vec.pack_quant_panel(a.type, kc, int(std::min<int64_t>(nr, m_len - m)),
                             row_ptr(a, m, item.i2 / bc.r2, item.i3 / bc.r3) + k0 / layout.block * block_bytes,
                             a.nb[1], panels + size_t(p) * panel_bytes);
      }
      const size_t x_offset = size_t(k0 / layout.block) * layout.activation_block_bytes();
      for (int64_t q = item.q_begin; q < item.q_end; ++q) {
        const int64_t n = q * mr;
        const int tokens = int(std::min<int64_t>(mr, n_len - n));
        for (int t = 0; t < tokens; ++t) x[t] = x_rows.row(n + t, item.batch) + x_offset;
        for (int64_t p = 0; p < n_panels_a; ++p) {
          const int64_t m = item.m0 + p * nr;
          vec.quant_gemm_tile(layout, kc, panels + size_t(p) * panel_bytes,
                              int(std::min<int64_t>(nr, m_len - m)), tokens, x,
                              output_at(node, m, n, item.i2, item.i3), ldc, kb > 0);
        }
      }
    }
  });
}

}  // namespace

void run_mul_mat_fallback(const Tensor& node, ExecContext& exec) {
  const Tensor& a = *node.src[0];
  const Tensor& b = *node.src[1];
  if (a.ne[0] == 0) {
    // Empty sums: every output is 0.
    for_each_row(node, 0, node.nrows(), [&](int64_t i1, int64_t i2, int64_t i3) {
      std::fill_n(output_at(node, 0, i1, i2, i3), node.ne[0], 0.0f);
    });
    return;
  }
  if (takes_mat_vec(a, b)) {
    // (A quantized a always has contiguous blocks: permute keeps its dimension 0 in place.)
    switch (activation_type(a.type)) {
      case ActivationType::Q8_K: return mat_vec(node, a, Int8Rows<BlockQ8_K>(b, exec), exec);
      case ActivationType::Q8_32: return mat_vec(node, a, Int8Rows<BlockQ8_32>(b, exec), exec);
      case ActivationType::F32:
      case ActivationType::BF16: return mat_vec(node, a, FloatRows(b, a.type, exec), exec);
    }
  } else if (is_quantized(a.type)) {
    quant_gemm(node, a, b, exec);
  } else {
    gemm(node, a, b, exec);
  }
}

}  // namespace tg::cpu
