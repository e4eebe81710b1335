#pragma once
// op_pool2d: 2-D max or average pooling of a dense NHWC slice on the CGRA (PoolTensor), with
// padding that may differ on each side, as a tile needs it for a window of a larger image that
// touches the image's edge on one side only (the halo rows of the interior side are real data).
//   max: padding never wins (every window holds at least one element of the slice);
//   avg: padding counts as zeros and the sum is divided by kh x kw (ggml's and PyTorch's default).
// Symmetric padding runs as one PoolTensor with its own padding; otherwise the slice is first
// copied into a padded buffer in imm (CGRA fill with the padding value, TDMA copy of its rows) and
// pooled without padding. Formats fp32, fp16, bf16 (the CGRA computes in f32, rounds once).
#include <cstdint>

#include "tilegraph/sim/cgra.h"
#include "tilegraph/sim/chip.h"
#include "tilegraph/sim/oplib/op_cost.h"
#include "tilegraph/sim/oplib/tensor_desc.h"

namespace tg::sim::oplib {

struct Pool2dParam {
  cgra::PoolOp op = cgra::PoolOp::Max;
  int32_t kh = 2, kw = 2, stride_h = 2, stride_w = 2;
  int32_t pad_top = 0, pad_bottom = 0, pad_left = 0, pad_right = 0;
};

// out: N x OH x OW x C, OH = (H + pad_top + pad_bottom - kh) / stride_h + 1 (likewise OW).
Shape4 pool2d_out_shape(const Pool2dParam& param, const Shape4& in);
// The padded copy of the slice for asymmetric padding, else 0.
uint64_t pool2d_imm_bytes(const Pool2dParam& param, Format format, const Shape4& in);
// in, out: dense (Tensor / NTensor) slices of one format. Returns the cycles of its instructions.
uint64_t op_pool2d(Tile& tile, const Pool2dParam& param, const Tsr& in, const Tsr& imm, const Tsr& out);
OpCost pool2d_cost(const ChipConfig& config, const Pool2dParam& param, Format format, const Shape4& in);

}  // namespace tg::sim::oplib
