#pragma once
// MUL_MAT for what the GEMM (kernels_matmul_gemm.cpp) does not take, above all quantized weights:
// r[m, n] = sum_k a[k, m] * b[k, n], a broadcast over b's batch dims. run_mul_mat_fallback
// (kernels_matmul_fallback.cpp) picks one of three paths, each in its own file:
//
//   matrix-vector (kernels_matmul_vec.cpp): N == 1 (decode), and quantized a up to kMaxQuantTokens
//     columns of b. Bound by reading a once: dot products of rows of a straight from their storage
//     against every column of b (f16/bf16 converted in registers; quantized blocks multiplied as
//     integers by b quantized to 8 bits, which quant.h makes part of mul_mat's result).
//   blocked float GEMM (kernels_matmul_blocked.cpp): f32, f16 and bf16 a in the GotoBLAS shape. b is
//     packed once per node; each work item takes kTileM columns of a, packs them into f32 panels
//     one K block at a time, and runs the GEMM's register-blocked micro-kernel
//     (evg/host/micro_kernel.h, through GemmKernels) over every block against all of b.
//   integer GEMM (kernels_matmul_quant.cpp): quantized a against more columns: the same items and
//     K blocks, a's quants kept as bytes, b quantized to 8 bits, multiplied as integers.
//
// What the paths share is here.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <span>

#include "kernels.h"
#include "row_io.h"

namespace tg::cpu {

// Depth of one packed block: an a panel (256 x 32 floats, 32 KiB) and a b panel (12 KiB) stay in
// L1/L2 while a micro-kernel call streams them. A multiple of 256, so no quantized block straddles
// two K blocks of the integer GEMM.
constexpr int64_t kBlockK = 256;
// Columns of a per work item: its packed panels (128 KiB) stay in L2 while all of b streams by.
constexpr int64_t kTileM = 128;
// When there are fewer column tiles than threads, b's rows are split too, but into chunks of at
// least this many rows so that packing a stays cheap next to the arithmetic.
constexpr int64_t kMinChunkN = 64;

// Columns of b up to which quantized weights take mat_vec, which reads a once: decode and small
// batches. The integer GEMM, which unpacks every weight into a panel first, is 2-6x slower at 2
// and 4 tokens, 1.6x slower (K types) to 1.2x faster (q4_0, q8_0) at 8 and 2.5x faster from a
// few dozen (bench/RESULTS.md, ops).
constexpr int64_t kMaxQuantTokens = 8;

// Whether the node takes the matrix-vector path.
bool takes_mat_vec(const Tensor& a, const Tensor& b);

// The activations b as mul_mat multiplies weights of `weight_type` by them (quant.h): as they
// are, or rounded to bf16 for bf16 weights. Row (i1, i2, i3) into buf (b.ne[0] floats), or the
// row itself when it needs no change; `bits` holds b.ne[0] values for the rounding.
const float* read_activation_row(const VecKernels& vec, DType weight_type, const Tensor& b, int64_t i1, int64_t i2,
                                 int64_t i3, float* buf, uint16_t* bits);

// b's rows, each read as f32 and quantized once per node by quantize(k, x, out) into
// `row_bytes` of shared scratch, laid out [B3, B2, N]: the 8-bit activations of quantized
// weights, in the matrix-vector path's format (Int8Rows) or the GEMM's (QuantActivationRows).
template <class Quantize>
inline uint8_t* quantize_rows(const Tensor& b, size_t row_bytes, ExecContext& exec, Quantize quantize) {
  auto* data = static_cast<uint8_t*>(exec.shared_scratch(size_t(b.nrows()) * row_bytes));
  convert_rows(b, data, row_bytes, exec, quantize);
  return data;
}

// Which matrix of a serves b's batch (i2, i3).
struct Broadcast {
  int64_t r2, r3;
  Broadcast(const Tensor& a, const Tensor& b) : r2(b.ne[2] / a.ne[2]), r3(b.ne[3] / a.ne[3]) {}
};

inline float* output_at(const Tensor& node, int64_t m, int64_t n, int64_t i2, int64_t i3) {
  return reinterpret_cast<float*>(row_ptr(node, n, i2, i3) + m * int64_t(node.nb[0]));
}

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
      fn(tc, GemmItem{batch, batch % node.ne[2], batch / node.ne[2], tm * kTileM, std::min(kTileM, m_len - tm * kTileM),
                      q_begin, std::min(items.n_panels, q_begin + items.panels_per_chunk)});
    }
  });
}

// The three paths (each requires what run_mul_mat_fallback checks first: a non-empty K).
void mat_vec(const Tensor& node, const Tensor& a, const Tensor& b, ExecContext& exec);
void blocked_gemm(const Tensor& node, const Tensor& a, const Tensor& b, ExecContext& exec);
// The integer GEMM; with `epilogue_ops`, each item's sums go to the thread's scratch and the ops
// (run_quant_matmul, kernels.h) to the last one's result.
void quant_gemm(const Tensor& node, const Tensor& a, const Tensor& b, ExecContext& exec,
                std::span<const Tensor* const> epilogue_ops = {});

}  // namespace tg::cpu
