#pragma once
// What rmsnorm and layernorm share: the checks of a dense row slice, where their f32 copies sit
// in the imm space, and the steps after the per-row statistic is applied.
#include <cstdint>

#include "tilegraph/sim/chip.h"
#include "tilegraph/sim/oplib/tensor_desc.h"

namespace tg::sim::oplib::detail {

struct Rows {
  int64_t r = 0, d = 0;
  uint64_t a = 0, t = 0, stat0 = 0, stat1 = 0;  // imm: x [R][D], xT [D][R], two R-vectors
};

Rows check_rows(const char* op, const Tsr& in, const Tsr* gamma, const Tsr* beta, const Tsr& imm, const Tsr& out);
// xT (centred for layernorm, as is for rmsnorm) divided per row by sqrt(mean(xT^2) + epsilon);
// the squares go to x.a, the per-row statistic to `stat`.
uint64_t divide_by_root_mean_square(Tile& tile, const Rows& x, float epsilon, uint64_t stat);
// From xT (normalised, transposed) to out: transpose back, gamma, beta, narrow.
uint64_t finish_rows(Tile& tile, const Rows& x, const Tsr* gamma, const Tsr* beta, const Tsr& out);

}  // namespace tg::sim::oplib::detail
