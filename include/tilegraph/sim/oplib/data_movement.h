#pragma once
// The load and store steps of a per-tile program (the TX8 toolchain's generated main.c):
//
//   while (!in_range.done) {
//     op_dma_load(tile, in_range, in_ddr, in);            // the next slice of the tile's range
//     op_dma_load_channels(tile, scale_ddr, in.shape, scale);
//     ...
//     op_batchnorm_inference(tile, param, in, scale, shift, mean, var, imm, out);
//     op_store_var(tile, out, out_ddr);                   // back to its place in DDR
//   }
//
// Each returns the cycles of the instructions it issued (each as if alone).
#include <cstdint>

#include "tilegraph/sim/chip.h"
#include "tilegraph/sim/oplib/tensor_desc.h"

namespace tg::sim::oplib {

// Loads the next slice of `range` from the dense NHWC tensor at `ddr_addr` into `dst` (its
// address, format, layout and shape_slice, the step, given): fills dst.shape (whole, start, real
// slice) and advances range.dynamic_offset, C fastest, then W, H, N; sets range.done when the
// slice reaching the end of the range has been loaded. Throws tg::Error when range is done.
uint64_t op_dma_load(Tile& tile, GShape& range, uint64_t ddr_addr, Tsr& dst);

// Loads the channels of `like` (shape_start.c, shape_real.c) from an f32 per-channel vector [C]
// at `ddr_addr` into `dst` in Cx layout ([Cx][64] then C0 aligned, padding zero), the unit vector
// the VuV instructions broadcast over an NCx slice of `like`. dst.addr is given; the rest is set.
uint64_t op_dma_load_channels(Tile& tile, uint64_t ddr_addr, const LShape& like, Tsr& dst);

// Stores the slice `src` holds to its place (src.shape) in the dense NHWC tensor at ddr_addr:
// op_store_var_ncx when src is NCx.
uint64_t op_store_var(Tile& tile, const Tsr& src, uint64_t ddr_addr);

}  // namespace tg::sim::oplib
