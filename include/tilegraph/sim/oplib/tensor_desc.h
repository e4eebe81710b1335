#pragma once
// How the TX8 oplib describes the tensors an op works on (its TSR, L_SHAPE and G_SHAPE): a tensor
// in a tile's SPM is a format, an address, a memory layout and the slice of the whole tensor it
// holds; a tile's share of a DDR tensor is a spatial range it walks in slices, one per
// load -> compute -> store iteration. Dimensions are always N, H, W, C (C innermost); `dim` is the
// tensor's own rank, its leading dimensions being 1.
#include <array>
#include <cstdint>
#include <string>

#include "tilegraph/sim/format.h"
#include "tilegraph/sim/layout.h"

namespace tg::sim::oplib {

inline constexpr int kShapeDims = 4;  // N, H, W, C
using Dims = std::array<int64_t, kShapeDims>;

Dims dims_of(const Shape4& shape);
Shape4 shape_of(const Dims& dims);
std::string dims_string(const Dims& dims);  // "2x1x2x131"

// L_SHAPE: the slice of a tensor one tile holds in SPM.
struct LShape {
  Dims shape_whole{1, 1, 1, 1};  // the whole tensor
  Dims shape_start{0, 0, 0, 0};  // the slice's first element in the whole tensor
  Dims shape_slice{1, 1, 1, 1};  // the slice the SPM space was allocated for
  Dims shape_real{1, 1, 1, 1};   // the slice it holds now (smaller at the end of a range)
  int32_t dim = 4;

  // A slice that is the whole tensor.
  static LShape whole(const Shape4& shape, int32_t dim = 4);
  Shape4 real() const { return shape_of(shape_real); }
};

// TSR: a tensor in the issuing tile's SPM.
struct Tsr {
  Format format = Format::FP32;
  uint64_t addr = 0;
  MemLayout layout = MemLayout::NTensor;
  LShape shape;

  LayoutGeometry geometry() const { return LayoutGeometry(shape.real(), format, layout); }
  // Bytes the SPM space holds: the allocated slice's size in the layout.
  uint64_t allocated_bytes() const;
};

// Scratch (imm) space of `bytes` at addr, as the ops take it.
Tsr imm_tsr(uint64_t addr, uint64_t bytes);

// G_SHAPE: one tile's share [spatial_start, spatial_end) of a DDR tensor, walked slice by slice
// by op_dma_load (data_movement.h): dynamic_offset is where the next load starts, done turns 1
// when the load that reaches the end of the range has been issued.
struct GShape {
  Dims spatial_start{0, 0, 0, 0};
  Dims spatial_end{1, 1, 1, 1};
  Dims dynamic_offset{0, 0, 0, 0};
  Dims shape{1, 1, 1, 1};  // the whole DDR tensor
  int32_t dim = 4;
  int32_t done = 0;

  // The range [start, end) of a tensor of shape `whole`; throws tg::Error if it does not fit.
  static GShape range(const Shape4& whole, const Dims& start, const Dims& end, int32_t dim = 4);
};

}  // namespace tg::sim::oplib
