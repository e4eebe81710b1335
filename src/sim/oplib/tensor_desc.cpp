#include "tilegraph/sim/oplib/tensor_desc.h"

#include "tilegraph/core/error.h"

namespace tg::sim::oplib {

Dims dims_of(const Shape4& s) { return {s.n, s.h, s.w, s.c}; }
Shape4 shape_of(const Dims& d) { return Shape4{d[0], d[1], d[2], d[3]}; }
std::string dims_string(const Dims& d) { return shape_string(shape_of(d)); }

LShape LShape::whole(const Shape4& shape, int32_t dim) {
  LShape s;
  s.shape_whole = s.shape_slice = s.shape_real = dims_of(shape);
  s.dim = dim;
  return s;
}

uint64_t Tsr::allocated_bytes() const {
  return LayoutGeometry(shape_of(shape.shape_slice), format, layout).total_bytes();
}

Tsr imm_tsr(uint64_t addr, uint64_t bytes) {
  Tsr t;
  t.format = Format::INT8;
  t.addr = addr;
  t.layout = MemLayout::Tensor;
  t.shape = LShape::whole(Shape4{1, 1, 1, int64_t(bytes)}, 1);
  return t;
}

GShape GShape::range(const Shape4& whole, const Dims& start, const Dims& end, int32_t dim) {
  const Dims w = dims_of(whole);
  for (int d = 0; d < kShapeDims; ++d) {
    if (start[d] < 0 || start[d] >= end[d] || end[d] > w[d]) {
      throw Error("G_SHAPE: range " + dims_string(start) + " to " + dims_string(end) + " is empty or outside " +
                  dims_string(w));
    }
  }
  GShape g;
  g.spatial_start = g.dynamic_offset = start;
  g.spatial_end = end;
  g.shape = w;
  g.dim = dim;
  return g;
}

}  // namespace tg::sim::oplib
