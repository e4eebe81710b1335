#include "oplib/engine_order.h"
#include "oplib/norm_steps.h"
#include "oplib/row_steps.h"
#include "tilegraph/sim/oplib/norm.h"

namespace tg::sim::oplib {

uint64_t op_layernorm(Tile& tile, const NormParam& param, const Tsr& in, const Tsr* gamma, const Tsr* beta,
                      const Tsr& imm, const Tsr& out) {
  using cgra::ArithOp;
  const detail::Rows x = detail::check_rows("op_layernorm", in, gamma, beta, imm, out);
  const int64_t n = x.r * x.d;
  if (n == 0) return 0;
  detail::after_transfers(tile);
  uint64_t cycles = detail::widen(tile, in.format, in.addr, x.a, n);
  cycles += detail::transpose_f32(tile, x.a, x.t, x.r, x.d);
  cycles += detail::reduce_columns(tile, cgra::ReduceOp::Mean, x.t, x.stat0, x.d, x.r);
  cycles += detail::apply_columns(tile, ArithOp::Sub, x.t, x.stat0, x.d, x.r);
  cycles += detail::divide_by_root_mean_square(tile, x, param.epsilon, x.stat1);
  return cycles + detail::finish_rows(tile, x, gamma, beta, out);
}

}  // namespace tg::sim::oplib
