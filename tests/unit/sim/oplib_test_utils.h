#pragma once
// Helpers of the op library's tests: dense tensors in DDR in a format, and the per-tile program
// of the TX8 toolchain's main.c (each tile walks its range of a DDR tensor slice by slice:
// load -> op -> store) so that a test can split an op over tiles and stitch the results back.
#include <gtest/gtest.h>

#include <functional>
#include <vector>

#include "sim_test_utils.h"
#include "tilegraph/sim/oplib/data_movement.h"
#include "tilegraph/sim/oplib/op_cost.h"
#include "tilegraph/sim/oplib/tensor_desc.h"

namespace tg::sim::test {

inline constexpr Format kOplibFormats[] = {Format::FP32, Format::FP16, Format::BF16};

inline ChipConfig mesh(int x, int y) {
  ChipConfig c;
  c.mesh_x = x;
  c.mesh_y = y;
  return c;
}

// Writes `values` rounded to `format` at addr of the DDR; returns what it now holds as f32.
inline std::vector<float> ddr_put(Chip& chip, uint64_t addr, const std::vector<float>& values, Format format) {
  std::vector<uint8_t> bytes(values.size() * format_bytes(format));
  from_f32(format, values.data(), bytes.data(), int64_t(values.size()), RoundMode::NearestEven);
  chip.ddr().write(addr, bytes.data(), bytes.size());
  std::vector<float> stored(values.size());
  to_f32(format, bytes.data(), stored.data(), int64_t(values.size()));
  return stored;
}

inline std::vector<float> ddr_get(const Chip& chip, uint64_t addr, int64_t n, Format format) {
  std::vector<uint8_t> bytes(static_cast<size_t>(n) * format_bytes(format));
  chip.ddr().read(addr, bytes.data(), bytes.size());
  std::vector<float> out(static_cast<size_t>(n));
  to_f32(format, bytes.data(), out.data(), n);
  return out;
}

// Tile t of `tiles` gets rows [t*R/tiles, (t+1)*R/tiles) of dimension `dim` of `whole` (tiles
// with an empty share get none) and walks them in slices of `step` (clamped to the range).
// `iteration(tile, range)` issues one load -> op -> store and is called until range.done.
inline void run_split(Chip& chip, int tiles, const Shape4& whole, int dim,
                      const std::function<void(Tile&, oplib::GShape&)>& iteration) {
  const oplib::Dims w = oplib::dims_of(whole);
  for (int t = 0; t < tiles; ++t) {
    oplib::Dims start{0, 0, 0, 0}, end = w;
    start[dim] = w[dim] * t / tiles;
    end[dim] = w[dim] * (t + 1) / tiles;
    if (start[dim] == end[dim]) continue;
    oplib::GShape range = oplib::GShape::range(whole, start, end);
    while (!range.done) iteration(chip.tile(t), range);
  }
}

// The whole of run_split for an op of one input and one output of the input's shape: each
// iteration loads a slice of `step` of the tensor at in_ddr in `layout`, calls
// op(tile, in, arena, out) (which takes its constants and imm space from the arena, after in and
// out) and stores out to out_ddr. Returns the sum of the cycles.
using SliceOp = std::function<uint64_t(Tile&, const oplib::Tsr& in, oplib::SpmArena& arena, const oplib::Tsr& out)>;
inline uint64_t run_sliced(Chip& chip, int tiles, Format format, MemLayout layout, const Shape4& whole,
                           const oplib::Dims& step, int split_dim, uint64_t in_ddr, uint64_t out_ddr,
                           const SliceOp& op) {
  uint64_t cycles = 0;
  run_split(chip, tiles, whole, split_dim, [&](Tile& tile, oplib::GShape& range) {
    oplib::SpmArena arena(tile.spm().size());
    oplib::Tsr in{format, 0, layout, {}};
    in.shape.shape_slice = step;
    in.addr = arena.allocate(in.allocated_bytes());
    cycles += oplib::op_dma_load(tile, range, in_ddr, in);
    oplib::Tsr out = in;
    out.addr = arena.allocate(in.allocated_bytes());
    cycles += op(tile, in, arena, out);
    cycles += oplib::op_store_var(tile, out, out_ddr);
  });
  return cycles;
}

// An f32 constant put in the tile's SPM by the host (a weight the program would load once).
inline oplib::Tsr put_constant(Tile& tile, oplib::SpmArena& arena, const std::vector<float>& values,
                               const Shape4& shape) {
  oplib::Tsr t = arena.tensor(Format::FP32, shape.n == 1 ? MemLayout::Tensor : MemLayout::NTensor, shape);
  put(tile, t.addr, values, Format::FP32);
  return t;
}

// The schedule orders every pair of instructions that share SPM bytes (chip.h, hazards): the ops'
// and the load / store steps' own waits make a load -> op -> store loop a correct program.
inline void expect_no_hazards(Chip& chip) {
  const ChipReport report = chip.report();
  EXPECT_EQ(report.hazard_count, 0u) << (report.hazards.empty() ? "" : report.hazards.front());
}

inline oplib::Tsr imm_of(oplib::SpmArena& arena, uint64_t bytes) {
  return oplib::imm_tsr(arena.allocate(bytes), bytes);
}

// Per-format tolerance of an op's result against the f32 reference, relative to the result's
// magnitude (the op computes in f32 and rounds once, or a few times, to the format): the
// instruction tolerance of sim_test_utils.h, with `abs` for results that cancel to near zero.
inline double oplib_abs_tolerance(Format format) { return format == Format::FP32 ? 2e-5 : 1e-3; }

}  // namespace tg::sim::test
