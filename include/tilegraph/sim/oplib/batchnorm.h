#pragma once
// op_batchnorm_inference, as the TX8 oplib builds it (docs/sim.md, "Worked example: BatchNorm"):
//   y = (x - mean[c]) * rsqrt(var[c] + eps) * scale[c] + shift[c]
// x and y: fp32, fp16 or bf16 in any layout (the engines' NCx/Cx by default); mean, var, scale,
// shift: fp32 per-channel unit vectors in Cx layout (op_dma_load_channels), whose channels are
// the slice's. Narrow formats compute in fp32 in the imm space:
//   1 op_gatherScatter   each batch to the upper half of a slot twice its size (make room)
//   2 ConvertOp fp16->fp32  each batch widened in place to the slot's start
//   3 VuV sub mean       C <= 32: a VuV per batch over its NHWC block; C > 32: a VuV_loop over
//                        the batch's Cx blocks and a VuV over its C0 part
//   4 VS add eps on var  5 rsqrt on var   6 VuV mul by var   7 VuV mul by scale   8 VuV add shift
//   9 ConvertOp fp32->fp16 back to the slot's upper half
//  10 op_gatherScatter   the batches to out
// fp32 copies x to out (one gather-scatter) and computes there, imm unused. `var` is overwritten
// with rsqrt(var + eps) (the oplib computes in place; a program reloads it each iteration).
#include <cstdint>

#include "tilegraph/sim/chip.h"
#include "tilegraph/sim/oplib/op_cost.h"
#include "tilegraph/sim/oplib/tensor_desc.h"

namespace tg::sim::oplib {

struct BatchNormParam {
  float epsilon = 1e-6f;
};

// Returns the cycles of its instructions (each as if alone). imm: batchnorm_inference_imm_bytes.
uint64_t op_batchnorm_inference(Tile& tile, const BatchNormParam& param, const Tsr& in, const Tsr& scale,
                                const Tsr& shift, const Tsr& mean, const Tsr& var, const Tsr& imm, const Tsr& out);

// 2 x the input slice's bytes for fp16/bf16 (each batch widened in a slot of twice its stride); 0
// for fp32.
uint64_t batchnorm_inference_imm_bytes(Format format, MemLayout layout, const Shape4& slice);
OpCost batchnorm_inference_cost(const ChipConfig& config, Format format, MemLayout layout, const Shape4& slice);

}  // namespace tg::sim::oplib
