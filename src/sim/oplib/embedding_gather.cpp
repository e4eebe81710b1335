#include <string>
#include <vector>

#include "oplib/engine_order.h"
#include "oplib/op_checks.h"
#include "tilegraph/sim/lsu.h"
#include "tilegraph/sim/oplib/data_layout_ops.h"

namespace tg::sim::oplib {

uint64_t op_embedding_gather(Tile& tile, const DdrTable& table, const Tsr& idx, const Tsr& out) {
  constexpr const char* kOp = "op_embedding_gather";
  detail::require_format(kOp, "idx", idx, {Format::INT32});
  const int64_t count = idx.shape.real().elements();
  detail::require(out.format == table.format, kOp, "out must have the table's format");
  detail::require(
      out.shape.real() == Shape4{1, 1, count, table.row_elements}, kOp,
      "out is " + dims_string(out.shape.shape_real) + ", expected " + shape_string({1, 1, count, table.row_elements}));
  detail::require(table.row_stride == 0 || table.row_stride >= table.row_elements, kOp,
                  "row_stride " + std::to_string(table.row_stride) + " is less than row_elements " +
                      std::to_string(table.row_elements));
  const uint64_t row_bytes = uint64_t(table.row_elements) * format_bytes(table.format);
  const uint64_t stride_bytes = table.row_stride ? uint64_t(table.row_stride) * format_bytes(table.format) : row_bytes;
  detail::order(tile, {Engine::NE, Engine::CT, Engine::TDMA, Engine::WDMA}, Engine::RDMA);  // the indices, the buffer
  return execute(tile, lsu::RdmaGather{table.addr, row_bytes, stride_bytes, table.rows, idx.addr, count, out.addr});
}

OpCost embedding_gather_cost(const ChipConfig& config, const DdrTable& table, int64_t count) {
  return cost_only_run(config, 0, [&](Tile& tile, SpmArena& arena) {
    const uint64_t row_bytes = uint64_t(table.row_elements) * format_bytes(table.format);
    const std::vector<uint8_t> row(row_bytes, 0);
    tile.chip().ddr().write(table.addr, row.data(), row.size());  // index 0, the zero idx the SPM holds
    const Tsr idx = arena.tensor(Format::INT32, MemLayout::Tensor, {1, 1, 1, count}, 1);
    const Tsr out = arena.tensor(table.format, MemLayout::Tensor, {1, 1, count, table.row_elements}, 2);
    return op_embedding_gather(tile, table, idx, out);
  });
}

}  // namespace tg::sim::oplib
