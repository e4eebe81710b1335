#include "tilegraph/sim/oplib/data_movement.h"

#include <algorithm>

#include "oplib/engine_order.h"
#include "tilegraph/core/error.h"
#include "tilegraph/sim/lsu.h"

namespace tg::sim::oplib {

uint64_t op_dma_load(Tile& tile, GShape& range, uint64_t ddr_addr, Tsr& dst) {
  if (range.done)
    throw Error("op_dma_load: the range " + dims_string(range.spatial_start) + " to " + dims_string(range.spatial_end) +
                " is already loaded");
  LShape& s = dst.shape;
  s.shape_whole = range.shape;
  s.shape_start = range.dynamic_offset;
  s.dim = range.dim;
  for (int d = 0; d < kShapeDims; ++d) {
    if (s.shape_slice[d] <= 0)
      throw Error("op_dma_load: slice " + dims_string(s.shape_slice) + " has an empty dimension");
    s.shape_real[d] = std::min(s.shape_slice[d], range.spatial_end[d] - s.shape_start[d]);
  }
  // The odometer: C steps fastest; a dimension that wraps carries into the one before it.
  bool carry = true;
  for (int d = kShapeDims - 1; d >= 0 && carry; --d) {
    range.dynamic_offset[d] += s.shape_slice[d];
    carry = range.dynamic_offset[d] >= range.spatial_end[d];
    if (carry) range.dynamic_offset[d] = range.spatial_start[d];
  }
  if (carry) range.done = 1;
  // One buffer per operand: the slice replaces data the tile's earlier work may still read.
  detail::order(tile, {Engine::NE, Engine::CT, Engine::TDMA, Engine::WDMA}, Engine::RDMA);
  lsu::LoadVar load;
  load.format = dst.format;
  load.ddr = lsu::DdrSlice{ddr_addr, shape_of(s.shape_whole), shape_of(s.shape_start), s.real()};
  load.spm_addr = dst.addr;
  load.layout = dst.layout;
  return execute(tile, load);
}

uint64_t op_dma_load_channels(Tile& tile, uint64_t ddr_addr, const LShape& like, Tsr& dst) {
  const int64_t c = like.shape_whole[3], start = like.shape_start[3], real = like.shape_real[3];
  dst.format = Format::FP32;
  dst.layout = MemLayout::Cx;
  detail::order(tile, {Engine::NE, Engine::CT, Engine::TDMA, Engine::WDMA}, Engine::RDMA);
  dst.shape = LShape{{1, 1, 1, c}, {0, 0, 0, start}, {1, 1, 1, like.shape_slice[3]}, {1, 1, 1, real}, 1};
  lsu::LoadVar load;
  load.format = Format::FP32;
  load.ddr = lsu::DdrSlice{ddr_addr, Shape4{1, 1, 1, c}, Shape4{0, 0, 0, start}, Shape4{1, 1, 1, real}};
  load.spm_addr = dst.addr;
  load.layout = MemLayout::Cx;
  return execute(tile, load);
}

uint64_t op_store_var(Tile& tile, const Tsr& src, uint64_t ddr_addr) {
  detail::order(tile, {Engine::NE, Engine::CT, Engine::TDMA, Engine::RDMA}, Engine::WDMA);
  lsu::DmaStore store;
  store.format = src.format;
  store.spm_addr = src.addr;
  store.layout = src.layout;
  store.ddr =
      lsu::DdrSlice{ddr_addr, shape_of(src.shape.shape_whole), shape_of(src.shape.shape_start), src.shape.real()};
  return execute(tile, store);
}

}  // namespace tg::sim::oplib
