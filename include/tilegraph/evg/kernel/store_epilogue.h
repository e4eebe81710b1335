#pragma once
// The plain GEMM's epilogue: D = acc, stored into an f32 matrix with a row stride. It satisfies
// the BlockEpilogue contract of evg/block.h, so a GEMM needs nothing of the EVG library.
#include <cstdint>
#include <cstring>

#include "tilegraph/core/error.h"
#include "tilegraph/evg/block.h"
#include "tilegraph/evg/kernel/target.h"

namespace tg::evg::kernel {
inline namespace TG_EVG_TARGET_NAMESPACE {

class StoreEpilogue {
 public:
  struct Arguments {
    float* d = nullptr;  // element (i, j) at d[i * ldd + j]
    int64_t ldd = 0;
  };

  StoreEpilogue(const Arguments& args, const GemmShape& problem, const BlockGrid&, int) : args_(args) {
    if (problem.m > 0 && problem.n > 0 && !args.d) throw Error("matmul: the store epilogue has no output");
    if (problem.m > 1 && args.ldd < problem.n) throw Error("matmul: the output's row stride is below N");
  }

  // Row strips (block.h) are copied while they are in L1/L2, not once a whole block has gone to L3.
  static constexpr bool kVisitsRowStrips = true;

  // D itself: summing a block there saves copying it (2-5% of a mid-size GEMM).
  float* accumulate_in_place(int64_t row0, int64_t col0, int64_t& ld) const {
    ld = args_.ldd;
    return args_.d + row0 * args_.ldd + col0;
  }

  // The block is cache-resident: one row copy each, none for a block summed in D.
  void visit(const AccBlock& acc, int) const {
    if (acc.data == args_.d + acc.row0 * args_.ldd + acc.col0) return;
    for (int64_t i = 0; i < acc.rows; ++i) {
      std::memcpy(args_.d + (acc.row0 + i) * args_.ldd + acc.col0, acc.data + i * acc.ld,
                  size_t(acc.cols) * sizeof(float));
    }
  }

  void finish(const Launcher&) const {}

 private:
  Arguments args_;
};

}  // namespace TG_EVG_TARGET_NAMESPACE
}  // namespace tg::evg::kernel
