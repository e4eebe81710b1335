// The blocked float GEMM of the MUL_MAT fallback (matmul_fallback.h): f32, f16 and bf16 weights in
// views the GEMM does not take. b is packed once per node into panels of whole rows; each work item
// packs kTileM columns of a one K block at a time and runs the GEMM's micro-kernel over them.
#include <cstring>
#include <string>

#include "gemm.h"
#include "matmul_fallback.h"

namespace tg::cpu {

namespace {

// The widest micro tile of any ISA (AVX-512's 32 columns).
constexpr int kMaxTileCols = 32;

// Packs a[m0 .. m0+m_len)[k0 .. k0+kc) (one matrix of a) into panels of nr columns:
// panel p holds w[k * nr + j] = a[m0 + p nr + j][k0 + k], columns past m_len zero. `rows_buf`
// holds nr * kBlockK floats for rows that need converting to f32 first.
void pack_a(const VecKernels& vec, const Tensor& a, int64_t ia2, int64_t ia3, int64_t m0, int64_t m_len, int64_t k0,
            int64_t kc, int nr, float* panels, float* rows_buf) {
  const int64_t n_panels = (m_len + nr - 1) / nr;
  const bool transposed_f32 = a.type == DType::F32 && a.nb[1] == sizeof(float) && a.ne[1] > 1;
  const bool direct = a.type == DType::F32 && a.nb[0] == sizeof(float);
  const float* rows[kMaxTileCols];
  for (int64_t p = 0; p < n_panels; ++p) {
    float* panel = panels + p * kc * nr;
    const int64_t cols = std::min<int64_t>(nr, m_len - p * nr);
    if (cols < nr) std::fill(panel, panel + kc * nr, 0.0f);
    if (transposed_f32) {
      // Columns m adjacent in memory: copy a run of columns for each k.
      const char* base = row_ptr(a, m0 + p * nr, ia2, ia3);
      for (int64_t k = 0; k < kc; ++k) {
        std::memcpy(panel + k * nr, base + (k0 + k) * int64_t(a.nb[0]), size_t(cols) * sizeof(float));
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

// b packed once per node into panels of mr rows for every K block, each row kBlockK floats apart
// (the micro-kernel's lda): panel (batch, kb, q) holds x[i * kBlockK + k] = b[q mr + i][kb kBlockK
// + k] of that batch (as read_activation_row reads it for weights of `weight_type`), rows past N
// and columns past K zero.
class PackedB {
 public:
  PackedB(const Tensor& b, DType weight_type, int mr, ExecContext& exec)
      : k_blocks_((b.ne[0] + kBlockK - 1) / kBlockK), n_panels_((b.ne[1] + mr - 1) / mr), panel_floats_(kBlockK * mr) {
    const int64_t k_len = b.ne[0], n_len = b.ne[1];
    const int64_t batches = b.ne[2] * b.ne[3];
    data_ = static_cast<float*>(
        exec.shared_scratch(size_t(batches * k_blocks_ * n_panels_ * panel_floats_) * sizeof(float)));
    const VecKernels& vec = exec.vec();
    // One task item per (batch, row panel): each reads its mr rows of b once, whole.
    exec.parallel_range(batches * n_panels_, mr * k_len, [&](const ThreadContext& tc, int64_t begin, int64_t end) {
      float* row = tc.scratch.floats(size_t(k_len) * 3 / 2 + 1);
      auto* bits = reinterpret_cast<uint16_t*>(row + k_len);
      for (int64_t item = begin; item < end; ++item) {
        const int64_t q = item % n_panels_, batch = item / n_panels_;
        const int64_t i2 = batch % b.ne[2], i3 = batch / b.ne[2];
        for (int64_t kb = 0; kb < k_blocks_; ++kb) {
          std::fill_n(panel(batch, kb, q), panel_floats_, 0.0f);
        }
        for (int i = 0; i < mr && q * mr + i < n_len; ++i) {
          const float* values = read_activation_row(vec, weight_type, b, q * mr + i, i2, i3, row, bits);
          for (int64_t kb = 0; kb < k_blocks_; ++kb) {
            const int64_t k0 = kb * kBlockK, kc = std::min(kBlockK, k_len - k0);
            std::copy_n(values + k0, kc, panel(batch, kb, q) + i * kBlockK);
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

}  // namespace

void blocked_gemm(const Tensor& node, const Tensor& a, const Tensor& b, ExecContext& exec) {
  const VecKernels& vec = exec.vec();
  // The GEMM's micro-kernel for this table's ISA: tile_rows rows of b against tile_cols columns
  // of a (AVX-512 12 x 32, AVX2 6 x 16, portable 4 x 8).
  const GemmKernels& kernels = gemm_kernels(vec.isa);
  const int mr = kernels.tile_rows, nr = kernels.tile_cols;
  if (nr > kMaxTileCols)
    throw Error("cpu: a GEMM micro tile wider than the fallback's " + std::to_string(kMaxTileCols));
  const int64_t k_len = a.ne[0], m_len = a.ne[1], n_len = node.ne[1];
  const int64_t ldc = int64_t(node.nb[1] / sizeof(float));
  const int64_t batches = node.ne[2] * node.ne[3];
  const Broadcast bc(a, b);
  const PackedB packed_b(b, a.type, mr, exec);
  const GemmItems items(m_len, n_len, mr, batches, exec.max_threads());
  const int64_t a_panel_floats = (kTileM + nr - 1) / nr * nr * kBlockK;

  for_each_gemm_item(node, m_len, items, exec, [&](const ThreadContext& tc, const GemmItem& item) {
    float* a_panels = tc.scratch.floats(size_t(a_panel_floats + nr * kBlockK + mr * nr));
    float* rows_buf = a_panels + a_panel_floats;
    float* edge = rows_buf + nr * kBlockK;
    for (int64_t kb = 0; kb * kBlockK < k_len; ++kb) {
      const int64_t k0 = kb * kBlockK, kc = std::min(kBlockK, k_len - k0);
      const bool accumulate = kb > 0;
      pack_a(vec, a, item.i2 / bc.r2, item.i3 / bc.r3, item.m0, item.m_count, k0, kc, nr, a_panels, rows_buf);
      for (int64_t q = item.q_begin; q < item.q_end; ++q) {
        const float* x = packed_b.panel(item.batch, kb, q);
        const int64_t n = q * mr, rows = std::min<int64_t>(mr, n_len - n);
        for (int64_t m = 0; m < item.m_count; m += nr) {
          const float* w = a_panels + m / nr * kc * nr;
          const int64_t cols = std::min<int64_t>(nr, item.m_count - m);
          float* c = output_at(node, item.m0 + m, n, item.i2, item.i3);
          if (rows == mr && cols == nr) {
            kernels.micro_kernel(mr, kc, x, kBlockK, w, c, ldc, accumulate);
            continue;
          }
          // Edge block: compute all of it aside, keep the part inside the output.
          kernels.micro_kernel(mr, kc, x, kBlockK, w, edge, nr, false);
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

}  // namespace tg::cpu
