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
  void (*visit)(void* context, const AccBlock& acc, int thread) = nullptr;
  void (*finish)(void* context, const Launcher& launcher) = nullptr;  // may be null
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
