// The integer GEMM of the MUL_MAT fallback (matmul_fallback.h): quantized weights against more
// columns of b than the matrix-vector path takes.
#include "chain_epilogue.h"
#include "matmul_fallback.h"

namespace tg::cpu {

namespace {

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

  const uint8_t* row(int64_t n, int64_t batch) const { return data_ + size_t(batch * b_.ne[1] + n) * row_bytes_; }
  // From one token's row to the next's.
  size_t row_bytes() const { return row_bytes_; }

 private:
  const Tensor& b_;
  size_t row_bytes_;
  uint8_t* data_;
};

}  // namespace

// Quantized types against more tokens than mat_vec takes: the GEMM's items and K blocks,
// with a's columns unpacked into integer panels (vec.h, pack_quant_panel) and b's rows quantized
// once (QuantActivationRows), multiplied as integers by quant_gemm_tiles. With an epilogue, an
// item's sums over all of K collect in the thread's scratch behind its panels (its tokens by its
// 128 weight rows at most: in L2), and the chain's ops take them from there.
void quant_gemm(const Tensor& node, const Tensor& a, const Tensor& b, ExecContext& exec,
                std::span<const Tensor* const> epilogue_ops) {
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

  const bool fused = !epilogue_ops.empty();
  for_each_gemm_item(node, m_len, items, exec, [&](const ThreadContext& tc, const GemmItem& item) {
    const int64_t n_panels_a = (item.m_count + nr - 1) / nr;
    const int64_t n_begin = item.q_begin * mr, n_end = std::min(item.q_end * mr, n_len);
    const size_t sums_at = (size_t(n_panels_a) * panel_bytes + 63) / 64 * 64;
    const size_t sums_bytes = fused ? size_t((n_end - n_begin) * item.m_count) * sizeof(float) : 0;
    auto* panels = static_cast<uint8_t*>(tc.scratch.bytes(sums_at + sums_bytes));
    auto* sums = reinterpret_cast<float*>(panels + sums_at);
    for (int64_t kb = 0; kb * kBlockK < k_len; ++kb) {
      const int64_t k0 = kb * kBlockK, kc = std::min(kBlockK, k_len - k0);
      for (int64_t p = 0; p < n_panels_a; ++p) {
        const int64_t m = item.m0 + p * nr;
        vec.pack_quant_panel(a.type, kc, int(std::min<int64_t>(nr, m_len - m)),
                             row_ptr(a, m, item.i2 / bc.r2, item.i3 / bc.r3) + k0 / layout.block * block_bytes, a.nb[1],
                             panels + size_t(p) * panel_bytes);
      }
      const size_t x_offset = size_t(k0 / layout.block) * layout.activation_block_bytes();
      for (int64_t q = item.q_begin; q < item.q_end; ++q) {
        const int64_t n = q * mr;
        const int tokens = int(std::min<int64_t>(mr, n_len - n));
        float* c = fused ? sums + (n - n_begin) * item.m_count : output_at(node, item.m0, n, item.i2, item.i3);
        vec.quant_gemm_tiles(layout, kc, panels, panel_bytes, int(item.m_count), tokens,
                             x_rows.row(n, item.batch) + x_offset, x_rows.row_bytes(), c, fused ? item.m_count : ldc,
                             kb > 0);
      }
    }
    if (fused) {
      apply_matmul_chain(node, epilogue_ops, vec, item.i2, item.i3, n_begin, n_end - n_begin, item.m0, item.m_count,
                         sums, item.m_count);
    }
  });
}

}  // namespace tg::cpu
