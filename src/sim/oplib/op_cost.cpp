#include "tilegraph/sim/oplib/op_cost.h"

#include <vector>

#include "tilegraph/core/error.h"

namespace tg::sim::oplib {

uint64_t SpmArena::allocate(uint64_t bytes) {
  const uint64_t at = next_;
  const uint64_t end = at + (bytes + kBatchAlignBytes - 1) / kBatchAlignBytes * kBatchAlignBytes;
  if (end > size_) {
    throw Error("SPM arena: " + std::to_string(bytes) + " bytes do not fit (" + std::to_string(size_ - at) + " of " +
                std::to_string(size_) + " left)");
  }
  next_ = end;
  return at;
}

Tsr SpmArena::tensor(Format format, MemLayout layout, const Shape4& shape, int32_t dim) {
  Tsr t;
  t.format = format;
  t.layout = layout;
  t.shape = LShape::whole(shape, dim);
  t.addr = allocate(t.allocated_bytes());
  return t;
}

OpCost cost_only_run(const ChipConfig& config, uint64_t imm_bytes,
                     const std::function<uint64_t(Tile&, SpmArena&)>& op) {
  ChipConfig one = config;
  one.mesh_x = one.mesh_y = 1;
  Chip chip(one);
  Tile& tile = chip.tile(0);
  const std::vector<uint8_t> zeros(one.spm_bytes, 0);
  tile.spm().write(0, zeros.data(), zeros.size());
  SpmArena arena(one.spm_bytes);
  return OpCost{op(tile, arena), imm_bytes};
}

}  // namespace tg::sim::oplib
