#pragma once
// The reference semantics of every op: plain loops over ne/nb, written to be obviously right
// rather than fast. It is the oracle every backend and every compiler pass is tested against.
#include <cstdint>

#include "tilegraph/core/graph.h"
#include "tilegraph/core/tensor.h"

namespace tg::reference {

// Computes `node` from its sources. Sources and node must have data; views and no-op nodes do
// nothing. Throws tg::Error for run-time violations (e.g. a row index out of range).
void compute_node(const Tensor& node);
// Computes every node of the graph in order.
void compute_graph(const Graph& graph);

// Shared scalar definitions, so that optimised kernels can reuse the exact same formula where
// they choose to.
float unary(UnaryOp op, float x);
float gelu_tanh(float x);
float silu(float x);
// ggml's ALiBi slope of `head` among `n_head` heads (1 when max_bias is 0), for soft_max and
// flash_attn_ext.
float alibi_slope(float max_bias, int64_t n_head, int64_t head);
// ARGMAX of one row: the index of the first maximum, NaNs skipped (0 when all are NaN). The CPU
// kernel takes it for rows its vector max cannot handle (those holding a NaN).
int32_t argmax_row(const float* x, int64_t n);
// Output row `oy` (node.ne[0] values) of POOL_2D `node` over one contiguous f32 plane of
// width x height. The CPU kernel shares it: its gain is the split over threads, not the window.
void pool_2d_row(const Tensor& node, const float* plane, int64_t width, int64_t height, int64_t oy, float* out);

}  // namespace tg::reference
