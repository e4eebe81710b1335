// The move programs of groups working in DDR (a view, transpose, reshape or concat between two
// groups) against the core reference: exact, on one tile, on 2x2 and 4x4 meshes (the boxes dealt
// to every tile) and on a chip whose SPM is small enough that the moves are cut into many boxes
// (staging halves of 8 KiB). Each case checks that the compiled program holds the move group it
// is about, so that a change of grouping cannot leave the move path untested.
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include "chip_run.h"
#include "common/tensor_utils.h"
#include "compiler_case.h"
#include "random_graph.h"
#include "tilegraph/core/ops.h"

namespace tg::compiler {
namespace {

using test::mesh;
using test::Rng;

// A 2x2 mesh with 16 KiB of SPM per tile.
sim::ChipConfig small_spm() {
  sim::ChipConfig config = mesh(2, 2);
  config.spm_bytes = 16 << 10;
  return config;
}

// Runs `outputs` on each chip, expects the reference's values exactly, no data hazard, and a
// group of only `move` ops among the compiled groups.
void expect_moves_match(const std::vector<Tensor*>& outputs, const std::string& move) {
  const sim::ChipConfig chips[] = {mesh(1, 1), mesh(2, 2), mesh(4, 4), small_spm()};
  for (const sim::ChipConfig& chip : chips) {
    SCOPED_TRACE(std::to_string(chip.mesh_x) + "x" + std::to_string(chip.mesh_y) + " tiles, " +
                 std::to_string(chip.spm_bytes) + " B of SPM");
    test::CompilerContext c;
    const test::CompilerCase cc = test::make_compiler_case(c.context, outputs);
    const test::ChipRun run = test::run_on_chip(outputs, cc, chip);
    test::expect_close(run.results, cc.reference, 0.0);
    EXPECT_EQ(run.report.hazard_count, 0u) << (run.report.hazards.empty() ? "" : run.report.hazards[0]);
    bool found = false;
    for (const GroupReport& g : run.compile.groups) found = found || g.ops == move;
    EXPECT_TRUE(found) << "no group of only " << move;
  }
}

TEST(CodegenMoves, KvCacheViewsPerHead) {
  // A cache of [head_dim, heads, positions] read as [head_dim, positions, heads]: a strided view,
  // one box per head; 129 positions of 64 dims (f16) are more than an 8 KiB staging half.
  for (DType type : {DType::F16, DType::F32}) {
    SCOPED_TRACE(std::string(dtype_name(type)));
    Context ctx;
    Rng rng{3};
    const int64_t dim = 64, heads = 3, positions = 129;
    Tensor* cache = test::random_input(ctx, rng, type, {dim, heads, positions + 2});
    Tensor* into = test::random_input(ctx, rng, DType::F32, {dim, positions, heads});
    Tensor* k = view_3d(ctx, cache, dim, positions, heads, cache->nb[2], cache->nb[1], 0);
    expect_moves_match({cpy(ctx, k, into)}, "view");
  }
}

TEST(CodegenMoves, TransposesOfEdgeShapes) {
  const std::vector<std::vector<int64_t>> shapes = {{1, 1}, {7, 1}, {33, 31}, {128, 3}, {65, 127}};
  for (const std::vector<int64_t>& shape : shapes) {
    SCOPED_TRACE(std::to_string(shape[0]) + "x" + std::to_string(shape[1]));
    Context ctx;
    Rng rng{unsigned(shape[0] * 131 + shape[1])};
    Tensor* a = test::random_input(ctx, rng, DType::F32, {shape[0], shape[1]});
    Tensor* b = test::random_input(ctx, rng, DType::F32, {shape[1], shape[0]});
    expect_moves_match({add(ctx, cont(ctx, transpose(ctx, a)), b)}, "transpose");
  }
}

}  // namespace
}  // namespace tg::compiler
