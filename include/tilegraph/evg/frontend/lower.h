#pragma once
// From a checked DAG to the C++ source of a JIT kernel that instantiates the EVG templates:
// a TopologicalVisitor over the DAG's nodes, a BlockEpilogue for the target's lanes, the
// Arguments built from the runtime bindings, and the seed-004 entry point `run`.
//
// The seam for the fused GEMM: everything up to `make_arguments` describes the epilogue alone.
// Today `run` hands the Epilogue to driver::run_epilogue (accumulator blocks given by the
// caller). A GEMM kernel keeps that part as is and instead wraps the Epilogue as
//   using Kernel = MatmulVisitor<BlockMmad, Epilogue, BlockScheduler>;
// calling the kernel layer's driver with the same make_arguments (KernelKind below selects it).
#include <string>

#include "tilegraph/evg/frontend/dag.h"

namespace tg::evg::frontend {

// What the generated `run` drives.
enum class KernelKind {
  kEpilogueDriver,  // driver/epilogue_driver.h: applies the epilogue to given AccBlocks
};

struct LowerOptions {
  int lanes = 4;              // arch::Cpu<lanes>
  bool fuse_compute = true;   // arch::Cpu (true) or arch::CpuStaged (false)
  int compute_length = 2048;  // BlockEpilogue's ComputeLength
  // `#pragma GCC target` string the kernel is compiled under ("" for the baseline), matching
  // `lanes` (cpu_target.h picks both from the CPU).
  std::string target;
  KernelKind kind = KernelKind::kEpilogueDriver;
  std::string source_text;  // echoed in a comment at the top
};

std::string lower_to_cpp(const EpilogueDag& dag, const LowerOptions& options);

}  // namespace tg::evg::frontend
