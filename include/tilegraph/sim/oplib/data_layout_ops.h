#pragma once
// Ops that only move data: transpose and the embedding gather (get_rows).
//
//   op_transpose: each of the N matrices of a dense N x 1 x rows x cols slice to cols x rows
//                 (one CGRA transpose per matrix).
//   op_embedding_gather: out row i = table row idx[i], the table a dense rows x D tensor in DDR
//                 (any format) and idx int32 in the tile's SPM: one op_rdmaGather straight from
//                 DDR (an embedding needs no load of its table), indices outside the table an
//                 error naming the index.
#include <cstdint>

#include "tilegraph/sim/chip.h"
#include "tilegraph/sim/oplib/op_cost.h"
#include "tilegraph/sim/oplib/tensor_desc.h"

namespace tg::sim::oplib {

uint64_t op_transpose(Tile& tile, const Tsr& in, const Tsr& out);
OpCost transpose_cost(const ChipConfig& config, Format format, const Shape4& slice);

// A table of `rows` rows of row_elements in DDR, row_stride elements apart (0: row_elements, a
// dense table; more: a window of a table's columns).
struct DdrTable {
  uint64_t addr = 0;
  Format format = Format::FP32;
  int64_t rows = 0, row_elements = 0;
  int64_t row_stride = 0;
};
// idx: int32 1 x 1 x 1 x count; out: 1 x 1 x count x row_elements in the table's format.
uint64_t op_embedding_gather(Tile& tile, const DdrTable& table, const Tsr& idx, const Tsr& out);
OpCost embedding_gather_cost(const ChipConfig& config, const DdrTable& table, int64_t count);

}  // namespace tg::sim::oplib
