#include "oplib/engine_order.h"
#include "oplib/norm_steps.h"
#include "oplib/row_steps.h"
#include "tilegraph/sim/oplib/norm.h"

namespace tg::sim::oplib {

uint64_t op_rmsnorm(Tile& tile, const NormParam& param, const Tsr& in, const Tsr* gamma, const Tsr& imm,
                    const Tsr& out) {
  const detail::Rows x = detail::check_rows("op_rmsnorm", in, gamma, nullptr, imm, out);
  const int64_t n = x.r * x.d;
  if (n == 0) return 0;
  detail::after_transfers(tile);
  uint64_t cycles = detail::widen(tile, in.format, in.addr, x.a, n);
  cycles += detail::transpose_f32(tile, x.a, x.t, x.r, x.d);
  cycles += detail::divide_by_root_mean_square(tile, x, param.epsilon, x.stat0);
  return cycles + detail::finish_rows(tile, x, gamma, nullptr, out);
}

}  // namespace tg::sim::oplib
