#pragma once
// A BlockEpilogue that forwards to plain function pointers: one compiled GEMM per ISA serves any
// epilogue defined elsewhere (a test's recorder, code compiled for a different ISA), at the cost
// of an indirect call per block.
#include <cstdint>

#include "tilegraph/core/error.h"
#include "tilegraph/evg/block.h"
#include "tilegraph/evg/kernel/target.h"

namespace tg::evg {

struct EpilogueCallbacks {
  void* context = nullptr;
  // Called once before any block, with what the BlockEpilogue constructor receives.
  void (*start)(void* context, const GemmShape& problem, const BlockGrid& grid, int num_threads) = nullptr;
  // Called for each block, or for row strips of it (block.h, kVisitsRowStrips).
  void (*visit)(void* context, const AccBlock& acc, int thread) = nullptr;
  void (*finish)(void* context, const Launcher& launcher) = nullptr;  // may be null
  // Optional: the epilogue's f32 output, element (i, j) at output[i * output_ld + j], which no
  // operand of the epilogue overlaps. The GEMM may then sum blocks there before visiting them
  // (block.h, accumulate_in_place): visit finds acc.data pointing into the output.
  float* output = nullptr;
  int64_t output_ld = 0;
};

namespace kernel {
inline namespace TG_EVG_TARGET_NAMESPACE {

class CallbackEpilogue {
 public:
  using Arguments = EpilogueCallbacks;

  CallbackEpilogue(const Arguments& args, const GemmShape& problem, const BlockGrid& grid, int num_threads)
      : args_(args) {
    if (!args_.visit) throw Error("matmul: the callback epilogue has no visit function");
    if (args_.start) args_.start(args_.context, problem, grid, num_threads);
  }
  static constexpr bool kVisitsRowStrips = true;

  float* accumulate_in_place(int64_t row0, int64_t col0, int64_t& ld) const {
    if (!args_.output) return nullptr;
    ld = args_.output_ld;
    return args_.output + row0 * args_.output_ld + col0;
  }

  void visit(const AccBlock& acc, int thread) const { args_.visit(args_.context, acc, thread); }
  void finish(const Launcher& launcher) const {
    if (args_.finish) args_.finish(args_.context, launcher);
  }

 private:
  Arguments args_;
};

}  // namespace TG_EVG_TARGET_NAMESPACE
}  // namespace kernel
}  // namespace tg::evg
