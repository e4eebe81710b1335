// The integer GEMM of the MUL_MAT fallback (matmul_fallback.h): quantized weights against more
// columns of b than the matrix-vector path takes.
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
// once (QuantActivationRows), multiplied as integers by quant_gemm_tiles.
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
        vec.quant_gemm_tiles(layout, kc, panels, panel_bytes, int(item.m_count), tokens,
                             x_rows.row(n, item.batch) + x_offset, x_rows.row_bytes(),
                             output_at(node, item.m0, n, item.i2, item.i3), ldc, kb > 0);
      }
    }
  });
}

}  // namespace tg::cpu
