// mul_mat on the GEMM of include/tilegraph/evg (cpu/gemm.h).
//
// r[m, n] = sum_k a[k, m] * b[k, n] is, per batch, the GEMM
//
//   D (b.ne1 x a.ne1) = A (b.ne1 x K: b's matrix) · B (K x a.ne1: a's matrix transposed)
//
// with D = r's matrix. Any view with a unit stride along ne0 or ne1 is a row- or column-major
// operand (the GEMM's trans flags), so padded, permuted and transposed sources run without a
// copy; quantized weights and views with no unit stride go to the blocked fallback.
//
// bf16 weights multiply activations rounded to bf16 (quant.h): b is rounded once per call into a
// contiguous bf16 copy, which the GEMM then reads as its A, so that on AVX512_BF16 both operands
// are bf16 and the GEMM multiplies them in pairs.
//
// Batches: when there are at least as many as threads (attention heads), or each is too small
// to split, every thread runs whole GEMMs on its own; otherwise the batches run one after
// another, each split over all threads.
#include <algorithm>
#include <atomic>
#include <optional>
#include <span>

#include "chain_epilogue.h"
#include "gemm.h"
#include "kernels.h"
#include "matmul_call.h"
#include "row_io.h"
#include "row_ops.h"

namespace tg::cpu {

namespace {

// Multiply-adds per batch below which one GEMM is not worth splitting over threads.
constexpr int64_t kMinSplitWork = int64_t(1) << 20;

std::optional<evg::ElementType> element_type(DType type) {
  switch (type) {
    case DType::F32: return evg::ElementType::F32;
    case DType::F16: return evg::ElementType::F16;
    case DType::BF16: return evg::ElementType::BF16;
    default: return std::nullopt;
  }
}

// The matrix of one batch of `t`, element (r, c) at r * nb[1] + c * nb[0], as a GEMM operand
// (data left unset): row-major when elements along ne0 are adjacent, column-major when those
// along ne1 are. With a single row or column the other stride is free.
std::optional<evg::MatrixOperand> operand_layout(const Tensor& t) {
  const std::optional<evg::ElementType> type = element_type(t.type);
  if (!type) return std::nullopt;
  const size_t size = size_t(evg::element_bytes(*type));
  auto stride = [&](int dim) { return int64_t(t.nb[dim] / size); };
  auto divisible = [&](int dim) { return t.nb[dim] % size == 0; };
  evg::MatrixOperand m;
  m.type = *type;
  if ((t.nb[0] == size || t.ne[0] == 1) && divisible(1)) {
    m.ld = stride(1);
  } else if ((t.nb[1] == size || t.ne[1] == 1) && divisible(0)) {
    m.transposed = true;
    m.ld = stride(0);
  } else {
    return std::nullopt;
  }
  return m;
}

evg::MatrixOperand at_batch(evg::MatrixOperand m, const Tensor& t, int64_t i2, int64_t i3) {
  m.data = static_cast<const char*>(t.data) + i2 * int64_t(t.nb[2]) + i3 * int64_t(t.nb[3]);
  return m;
}

// The row ops after the GEMM, applied to each accumulator block (or row strip) of one batch: the
// fused epilogue of a replay plan's matmul chain. The intermediate results never reach memory.
// The GEMM may sum a block in the last result's memory first (output()): the ops are elementwise
// and the chain's operands never overlap that memory (fusion.h), so they then run in place.
struct ChainEpilogue {
  const Tensor* matmul;                // the chain's first value
  std::span<const Tensor* const> ops;  // row ops; the last one's result is stored
  const VecKernels* vec;
  int64_t i2, i3;

  // The last result's matrix for this batch when it can hold the f32 accumulator, else null.
  float* output(int64_t& ld) const {
    const Tensor& last = *ops.back();
    const bool rows_apart = last.ne[1] <= 1 || int64_t(last.nb[1]) >= last.ne[0] * int64_t(sizeof(float));
    if (!is_f32_row_contiguous(last) || last.nb[1] % sizeof(float) != 0 || !rows_apart) return nullptr;
    ld = last.ne[1] > 1 ? int64_t(last.nb[1] / sizeof(float)) : last.ne[0];  // one row: any stride
    return reinterpret_cast<float*>(row_ptr(last, 0, i2, i3));
  }

  static void visit(void* context, const evg::AccBlock& acc, int) {
    const ChainEpilogue& e = *static_cast<const ChainEpilogue*>(context);
    apply_matmul_chain(*e.matmul, e.ops, *e.vec, e.i2, e.i3, acc.row0, acc.rows, acc.col0, acc.cols, acc.data, acc.ld);
  }
};

// Whether the activations b must be rounded to bf16 before the GEMM reads them.
bool rounds_activations(const Tensor& a, const Tensor& b) {
  return activation_type(a.type) == ActivationType::BF16 && b.type != DType::BF16;
}

// The GEMM's operand layouts for `node`, or nothing when it must take the fallback.
struct OperandLayouts {
  evg::MatrixOperand a, b;
};
std::optional<OperandLayouts> operand_layouts(const Tensor& node) {
  const Tensor& weights = *node.src[0];
  const Tensor& activations = *node.src[1];
  std::optional<evg::MatrixOperand> a_layout =
      rounds_activations(weights, activations)
          ? evg::MatrixOperand{nullptr, evg::ElementType::BF16, activations.ne[0], false}
          : operand_layout(activations);
  std::optional<evg::MatrixOperand> b_layout = operand_layout(weights);
  const bool output_fits = node.nb[0] == sizeof(float) && node.nb[1] % sizeof(float) == 0;
  if (!a_layout || !b_layout || !output_fits) return std::nullopt;
  b_layout->transposed = !b_layout->transposed;  // the GEMM's B is a's matrix transposed
  return OperandLayouts{*a_layout, *b_layout};
}

// b's rows rounded to bf16 into `out`, [B3, B2, N, K].
void round_activations_to_bf16(const Tensor& b, uint16_t* out, ExecContext& exec) {
  const VecKernels& vec = exec.vec();
  convert_rows(
      b, reinterpret_cast<uint8_t*>(out), size_t(b.ne[0]) * sizeof(uint16_t), exec,
      [&](int64_t k, const float* x, uint8_t* row) { vec.f32_to_bf16(k, reinterpret_cast<uint16_t*>(row), x); });
}

}  // namespace

std::optional<MatmulCall> prepare_matmul(const Tensor& node, Isa isa, int threads) {
  const std::optional<OperandLayouts> layouts = operand_layouts(node);
  if (!layouts) return std::nullopt;
  const Tensor& a = *node.src[0];
  const Tensor& b = *node.src[1];
  MatmulCall call;
  call.kernels = &gemm_kernels(isa);
  call.rounds_activations = rounds_activations(a, b);
  call.a = layouts->a;
  call.b = layouts->b;
  call.ldd = int64_t(node.nb[1] / sizeof(float));
  call.r2 = b.ne[2] / a.ne[2];
  call.r3 = b.ne[3] / a.ne[3];
  call.batches = node.ne[2] * node.ne[3];
  const evg::GemmShape shape{b.ne[1], a.ne[1], a.ne[0]};
  const int64_t work = shape.m * shape.n * std::max<int64_t>(shape.k, 1);
  call.batches_in_parallel = call.batches > 1 && (call.batches >= threads || work < kMinSplitWork);
  call.tasks = call.batches_in_parallel ? task_count(call.batches, std::max<int64_t>(1, work / 16), threads) : 1;
  call.plan =
      call.kernels->plan({shape, call.a, call.b}, call.batches_in_parallel ? 1 : threads, gemm_tuning(call.b.type));
  return call;
}

void run_matmul(const MatmulCall& call, const Tensor& node, std::span<const Tensor* const> epilogue_ops,
                ExecContext& exec) {
  const Tensor& a = *node.src[0];
  const Tensor& b = *node.src[1];
  const GemmKernels& kernels = *call.kernels;
  // Shared scratch: the rounded activations, then (batches one after another) the workspace.
  const size_t rounded_bytes = call.rounds_activations ? (size_t(b.nelements()) * sizeof(uint16_t) + 63) / 64 * 64 : 0;
  char* shared = static_cast<char*>(
      exec.shared_scratch(rounded_bytes + (call.batches_in_parallel ? 0 : call.plan.workspace_bytes)));
  auto* rounded = reinterpret_cast<uint16_t*>(shared);
  if (call.rounds_activations) round_activations_to_bf16(b, rounded, exec);
  auto run_batch = [&](int64_t batch, const evg::Launcher& launcher, void* workspace) {
    const int64_t i2 = batch % node.ne[2], i3 = batch / node.ne[2];
    evg::MatrixOperand a_batch = at_batch(call.a, b, i2, i3);
    if (call.rounds_activations) a_batch.data = rounded + (i3 * b.ne[2] + i2) * b.ne[1] * b.ne[0];
    const evg::MatrixOperand b_batch = at_batch(call.b, a, i2 / call.r2, i3 / call.r3);
    if (epilogue_ops.empty()) {
      float* d = reinterpret_cast<float*>(row_ptr(node, 0, i2, i3));
      kernels.gemm(call.plan, a_batch, b_batch, d, call.ldd, launcher, workspace);
      return;
    }
    ChainEpilogue chain{&node, epilogue_ops, &exec.vec(), i2, i3};
    evg::EpilogueCallbacks callbacks;
    callbacks.context = &chain;
    callbacks.visit = ChainEpilogue::visit;
    callbacks.output = chain.output(callbacks.output_ld);
    kernels.gemm_with_epilogue(call.plan, a_batch, b_batch, callbacks, launcher, workspace);
  };

  if (call.batches_in_parallel) {
    const evg::Launcher serial = evg::Launcher::serial();
    std::atomic<int64_t> next{0};
    exec.parallel(call.tasks, [&](const ThreadContext& tc) {
      void* workspace = tc.scratch.bytes(call.plan.workspace_bytes);
      for (int64_t batch; (batch = next.fetch_add(1, std::memory_order_relaxed)) < call.batches;) {
        run_batch(batch, serial, workspace);
      }
    });
    return;
  }
  void* workspace = shared + rounded_bytes;
  const evg::Launcher launcher = exec.launcher();
  for (int64_t batch = 0; batch < call.batches; ++batch) run_batch(batch, launcher, workspace);
}

bool mul_mat_uses_gemm(const Tensor& node) { return operand_layouts(node).has_value(); }

void run_mul_mat(const Tensor& node, ExecContext& exec) {
  const std::optional<MatmulCall> call = prepare_matmul(node, exec.vec().isa, exec.max_threads());
  if (!call) return run_mul_mat_fallback(node, exec);
  run_matmul(*call, node, {}, exec);
}

}  // namespace tg::cpu
