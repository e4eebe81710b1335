#pragma once
// The row semantics of the elementwise and row-normalising ops (ADD, SUB, MUL, DIV, SCALE,
// UNARY, GLU, NORM, RMS_NORM). Their kernel and the fused chains of a replay plan both push rows
// through apply_row, which is what makes a fused chain bit-identical to running its nodes one by
// one: the same vector routines see the same f32 values either way.
#include <cstdint>
#include <span>

#include "kernels.h"

namespace tg::cpu {

bool is_row_op(Op op);

// Which source of `node` a fused chain's value stands for: 0, or 1 when the previous link is the
// second operand of a binary op (add(residual, mul_mat(...))). The op then reads its first
// operand from memory and keeps its operand order, so the fused result has the unfused bits.
int chain_value_slot(const Tensor& node, const Tensor& chain_value);

// out = op(x, the node's other operands at row (i1, i2, i3)). x is the row of the node's source
// `value_slot` (chain_value_slot; 0 outside chains) as f32 (2 * ne0 elements for GLU's halves
// form); out may equal x except in that form. `extra` holds row_op_extra_floats(node) floats for
// operands the op converts itself.
void apply_row(const Tensor& node, int value_slot, const VecKernels& vec, float* out, const float* x, float* extra,
               int64_t i1, int64_t i2, int64_t i3);
int64_t row_op_extra_floats(const Tensor& node);

// Whether `node` can run on a segment of its rows fed straight from a GEMM's accumulator (a
// matmul epilogue) standing for its source `value_slot`: an elementwise f32 op whose other
// operands are f32 rows with unit stride, broadcast whole (ADD/SUB/MUL/DIV with b.ne0 equal to
// ne0 or 1, SCALE, UNARY, split-form GLU). Norms need whole rows; the halves form of GLU changes
// the row length.
bool is_segment_op(const Tensor& node, int value_slot);
// Columns [col, col + n) of row (i1, i2, i3): out = op(x, the other operands' matching columns),
// x standing for source `value_slot`. Each element gets exactly the value apply_row gives it,
// since the vector routines compute every element alike wherever a row starts.
void apply_segment(const Tensor& node, int value_slot, const VecKernels& vec, float* out, const float* x, int64_t col,
                   int64_t n, int64_t i1, int64_t i2, int64_t i3);

// The kernel of every row op.
void run_row_op(const Tensor& node, ExecContext& exec);

// Runs a chain of row ops in one pass over the rows: chain[k]'s result is an operand of
// chain[k+1] (chain_value_slot), all results are f32 with the same shape, and only the last one
// is stored — the others stay in a row buffer. The caller guarantees that nothing else reads the intermediate results
// and that the last result's memory does not overlap any operand the chain reads.
void run_row_op_chain(std::span<const Tensor* const> chain, ExecContext& exec);

}  // namespace tg::cpu
